/* mixprec lab autograder (a Gradescope autograder bundle) and mixprec lab
 * autograde (what its run_autograder runs for one submission). The layout
 * and results.json follow Gradescope's "Autograder Specifications" page
 * (gradescope-autograders.readthedocs.io/en/latest/specs/); the grading is
 * teach/autograde.h. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/lab_opts.h"
#include "teach/autograde.h"
#include "teach/classroom.h"
#include "teach/exercise.h"
#include "util/file.h"

#define TARBALL "mixprec-src.tar.gz"
#define TARBALL_MAX (256u << 20)

/* The Debian/Ubuntu packages the build needs: ./run's list without the
 * test-only ones (tmux, python3-jsonschema). */
#define PACKAGES                                                                                                   \
	"build-essential autoconf automake pkg-config libncurses-dev libcsv-dev check libopenblas-dev libmpfr-dev "    \
	"libgmp-dev libmd4c-dev libjansson-dev libcairo2-dev"

static const char setup_sh[] =
	"#!/usr/bin/env bash\n"
	"# Gradescope runs this once, as root, in /autograder/source, when it builds\n"
	"# the autograder's image: it installs the Ubuntu packages mixprec needs and\n"
	"# builds and installs mixprec from the source tarball of this bundle.\n"
	"#   MIXPREC_SETUP_NO_APT=1   skip apt-get (the packages are there already)\n"
	"#   MIXPREC_PREFIX=DIR       install under DIR (default /usr/local, on PATH)\n"
	"set -eu\n"
	"cd \"$(dirname \"$0\")\"\n"
	"if [ -z \"${MIXPREC_SETUP_NO_APT:-}\" ]; then\n"
	"\texport DEBIAN_FRONTEND=noninteractive\n"
	"\tapt-get update\n"
	"\tapt-get install -y --no-install-recommends " PACKAGES "\n"
	"fi\n"
	"rm -rf mixprec-build\n"
	"mkdir mixprec-build\n"
	"tar -xzf " TARBALL " -C mixprec-build --strip-components=1\n"
	"cd mixprec-build\n"
	"./configure --prefix=\"${MIXPREC_PREFIX:-/usr/local}\" --enable-cuda=no\n"
	"make -j\"$(nproc)\"\n"
	"make install\n"
	"\"${MIXPREC_PREFIX:-/usr/local}/bin/mixprec\" --version\n";

static const char run_sh[] =
	"#!/bin/sh\n"
	"# Gradescope runs this for every submission. It grades\n"
	"# submission/*.csv for the student of submission_metadata.json and writes\n"
	"# results/results.json, all under /autograder, or under $AUTOGRADER_ROOT\n"
	"# when that is set (a trial run in another folder).\n"
	"exec mixprec lab autograde --root \"${AUTOGRADER_ROOT:-/autograder}\"\n";

static void autograder_help(void)
{
	printf("Usage: mixprec lab autograder --out DIR --source TARBALL [--course-seed S]\n"
	       "                              [--roster FILE] [--exercises LIST]\n"
	       "Writes a Gradescope autograder into DIR; zip DIR's files (not the folder)\n"
	       "and upload the zip as the assignment's autograder:\n"
	       "  setup.sh            installs the Ubuntu packages and builds mixprec from\n"
	       "                      " TARBALL "\n"
	       "  run_autograder      grades a submission: 'mixprec lab autograde'\n"
	       "  lab.json            the course seed and the exercises graded\n"
	       "  roster.csv          with --roster: only its students are graded\n"
	       "  " TARBALL "  the source (a copy of --source)\n"
	       "A student uploads one CSV of answers (the template lab new wrote, any file\n"
	       "name); their id is users[].sid of Gradescope's submission_metadata.json, or\n"
	       "their email when the course has no SIDs: give the roster those ids.\n\n"
	       "  --out DIR           where to write (created when missing)\n"
	       "  --source TARBALL    this program's source: the mixprec-VERSION.tar.gz\n"
	       "                      that 'make dist' writes (required)\n"
	       "  --course-seed S     the seed of the lab's sheets (default:\n"
	       "                      $MIXPREC_COURSE_SEED, else 0)\n"
	       "  --roster FILE       CSV with a student_id column\n"
	       "  --exercises LIST    exercise ids, comma-separated, or 'all' (default\n"
	       "                      %s)\n"
	       "  --exercise-dir DIR  read the exercises from DIR\n"
	       "  -h, --help          this text\n",
	       LAB_DEFAULT_SET);
}

static void autograde_help(void)
{
	printf("Usage: mixprec lab autograde [--root DIR]\n"
	       "Grades one Gradescope submission, as run_autograder does: reads\n"
	       "DIR/source/lab.json, DIR/submission_metadata.json and the one CSV of\n"
	       "DIR/submission/, and writes DIR/results/results.json (one test per answer,\n"
	       "1 point when right; a wrong one says which mistake it shows, never the\n"
	       "answer). A submission that cannot be graded gets score 0 and says why.\n\n"
	       "  --root DIR          the autograder's root (default $AUTOGRADER_ROOT, else\n"
	       "                      /autograder)\n"
	       "  --exercise-dir DIR  read the exercises from DIR\n"
	       "  -h, --help          this text\n\n"
	       "Exit status: 0 results.json written (whatever the score), 2 bad usage,\n"
	       "3 the lab's configuration is unusable (a score-0 result is still written)\n"
	       "or results.json cannot be written.\n");
}

typedef struct {
	const char *out, *source, *seed, *roster, *list, *dir, *root;
} ag_opts;

enum { OPT_OUT = 256, OPT_SOURCE, OPT_SEED, OPT_ROSTER, OPT_LIST, OPT_DIR, OPT_ROOT };

/* Parses argv (argv[0] the action); -1 after --help. */
static int parse(int argc, char **argv, ag_opts *o, bool generate)
{
	static const struct option gen_opts[] = {
		{ "out", required_argument, NULL, OPT_OUT },
		{ "source", required_argument, NULL, OPT_SOURCE },
		{ "course-seed", required_argument, NULL, OPT_SEED },
		{ "roster", required_argument, NULL, OPT_ROSTER },
		{ "exercises", required_argument, NULL, OPT_LIST },
		{ "exercise-dir", required_argument, NULL, OPT_DIR },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	static const struct option run_opts[] = {
		{ "root", required_argument, NULL, OPT_ROOT },
		{ "exercise-dir", required_argument, NULL, OPT_DIR },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const struct option *opts = generate ? gen_opts : run_opts;
	memset(o, 0, sizeof *o);
	o->seed = ex_course_seed(NULL);
	o->list = LAB_DEFAULT_SET;
	const char *env = getenv("AUTOGRADER_ROOT");
	o->root = env && env[0] ? env : "/autograder";
	cli_args args = { 0 };
	char *value;
	int c;
	while ((c = cli_getopt(&args, argc, argv, opts, &value)) != -1) {
		switch (c) {
		case CLI_ARG_VALUE:
			cli_error("lab", "unexpected argument '%s'", value);
			return CLI_USAGE;
		case OPT_OUT: o->out = optarg; break;
		case OPT_SOURCE: o->source = optarg; break;
		case OPT_SEED:
			if (!cli_parse_course_seed("lab", optarg, &o->seed))
				return CLI_USAGE;
			break;
		case OPT_ROSTER: o->roster = optarg; break;
		case OPT_LIST: o->list = optarg; break;
		case OPT_DIR: o->dir = optarg; break;
		case OPT_ROOT: o->root = optarg; break;
		case 'h':
			(generate ? autograder_help : autograde_help)();
			return cli_flush_stdout("lab") ? -1 : CLI_ENV;
		default:
			return cli_option_error("lab", c, argv, opts);
		}
	}
	return CLI_OK;
}

/* One file of the bundle: its name and bytes. */
typedef struct {
	const char *name;
	const char *data;
	size_t len;
	bool exec;
} bundle_file;

/* Reads the inputs of the bundle (the tarball and the roster) into
 * files[3] and [4]; CLI_OK or the reported failure. */
static int read_inputs(const ag_opts *o, bundle_file *files, char **tar, char **roster)
{
	char err[4600];
	size_t len;
	mp_status st = file_read_all(o->source, TARBALL_MAX, tar, &len, err, sizeof err);
	if (st != MP_OK) {
		cli_error("lab", "--source: %s", err);
		return st == MP_EINVAL ? CLI_USAGE : CLI_ENV;
	}
	if (len < 2 || (unsigned char)(*tar)[0] != 0x1f || (unsigned char)(*tar)[1] != 0x8b) {
		cli_error("lab", "--source: %s is not a gzip tarball (give the mixprec-VERSION.tar.gz of 'make dist')",
		          o->source);
		return CLI_USAGE;
	}
	files[3] = (bundle_file){ .name = TARBALL, .data = *tar, .len = len };
	if (!o->roster)
		return CLI_OK;
	class_roster r = { 0 };
	ex_diags d = { 0 };
	st = class_roster_load(&r, o->roster, &d);
	for (size_t i = 0; i < d.count; i++)
		fprintf(stderr, "mixprec lab: %s\n", d.msgs[i]);
	int rc = st == MP_ENOMEM || (st == MP_EIO && access(o->roster, R_OK) != 0) ? CLI_ENV
	         : d.count || st != MP_OK                                          ? CLI_USAGE
	         : r.count == 0                                                    ? CLI_USAGE
	                                                                           : CLI_OK;
	if (rc == CLI_USAGE)
		cli_error("lab", "%s: %s; nothing written", o->roster, r.count ? "fix the rows above" : "no usable student");
	size_t n = r.count;
	class_roster_free(&r);
	ex_diags_free(&d);
	if (rc != CLI_OK || n == 0)
		return rc;
	if (file_read_all(o->roster, CLASS_FILE_MAX, roster, &len, err, sizeof err) != MP_OK) {
		cli_error("lab", "--roster: %s", err);
		return CLI_ENV;
	}
	files[4] = (bundle_file){ .name = AG_ROSTER, .data = *roster, .len = len };
	return CLI_OK;
}

/* Writes the n files into o->out, having checked every target first. */
static int write_bundle(const ag_opts *o, const bundle_file *files, size_t n)
{
	char path[4400], err[4600];
	if (mkdir(o->out, 0777) != 0 && errno != EEXIST) {
		cli_error("lab", "cannot create %s: %s", o->out, strerror(errno));
		return CLI_ENV;
	}
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof path, "%s/%s", o->out, files[i].name);
		if (file_same(path, o->source) || (o->roster && file_same(path, o->roster))) {
			cli_error("lab", "%s: is an input (--source or --roster); nothing written", path);
			return CLI_USAGE;
		}
		if (file_check_target(path, FILE_IN_FOLDER, err, sizeof err) != MP_OK) {
			cli_error("lab", "%s; nothing written", err);
			return CLI_USAGE;
		}
	}
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof path, "%s/%s", o->out, files[i].name);
		file_atomic a;
		if (file_atomic_open_flags(&a, path, FILE_IN_FOLDER, err, sizeof err) != MP_OK ||
		    (fwrite(files[i].data, 1, files[i].len, a.fp) != files[i].len && (file_atomic_abort(&a), true)) ||
		    file_atomic_commit(&a, err, sizeof err) != MP_OK) {
			cli_error("lab", "%s", err[0] ? err : path);
			return CLI_ENV;
		}
		if (files[i].exec && chmod(path, 0755) != 0) {
			cli_error("lab", "%s: cannot make it executable: %s", path, strerror(errno));
			return CLI_ENV;
		}
	}
	return CLI_OK;
}

int cmd_lab_autograder(int argc, char **argv)
{
	ag_opts o;
	int rc = parse(argc, argv, &o, true);
	if (rc != CLI_OK)
		return rc < 0 ? CLI_OK : rc;
	if (!o.out || !o.source) {
		cli_error("lab", "autograder: %s is required", !o.out ? "--out DIR" : "--source TARBALL (from 'make dist')");
		return CLI_USAGE;
	}
	if (!cli_course_seed_printable("lab", o.seed == ex_course_seed(NULL) ? "MIXPREC_COURSE_SEED" : "--course-seed",
	                               o.seed))
		return CLI_USAGE;
	ex_set set;
	if ((rc = cli_load_exercises("lab", o.dir, &set, false)) != CLI_OK)
		return rc;
	const char *ids[AG_MAX_EXERCISES];
	const ex_exercise **ex = NULL;
	size_t nids = 0;
	char *tar = NULL, *roster = NULL, *conf = NULL;
	bundle_file files[5] = {
		{ .name = "setup.sh", .data = setup_sh, .len = sizeof setup_sh - 1, .exec = true },
		{ .name = "run_autograder", .data = run_sh, .len = sizeof run_sh - 1, .exec = true },
	};
	if ((rc = lab_select_exercises("lab", &set, o.list, &ex, &nids)) != CLI_OK)
		goto done;
	if (nids > AG_MAX_EXERCISES) {
		cli_error("lab", "--exercises: more than %d exercises", AG_MAX_EXERCISES);
		rc = CLI_USAGE;
		goto done;
	}
	for (size_t i = 0; i < nids; i++)
		ids[i] = ex[i]->id;
	if ((rc = read_inputs(&o, files, &tar, &roster)) != CLI_OK)
		goto done;
	if (!(conf = ag_config_text(o.seed, ids, nids, o.roster ? AG_ROSTER : NULL))) {
		cli_error("lab", "out of memory");
		rc = CLI_ENV;
		goto done;
	}
	size_t clen = strlen(conf);
	char *c2 = realloc(conf, clen + 2);   /* room for the final newline */
	if (!c2) {
		cli_error("lab", "out of memory");
		rc = CLI_ENV;
		goto done;
	}
	conf = c2;
	memcpy(conf + clen, "\n", 2);
	files[2] = (bundle_file){ .name = AG_CONFIG, .data = conf, .len = clen + 1 };
	if ((rc = write_bundle(&o, files, o.roster ? 5 : 4)) == CLI_OK)
		printf("Wrote a Gradescope autograder (%zu exercise%s) to %s: zip its files and upload the zip.\n", nids,
		       nids == 1 ? "" : "s", o.out);
done:
	free(ex);
	free(tar);
	free(roster);
	free(conf);
	ex_set_free(&set);
	return cli_flush_stdout("lab") ? rc : CLI_ENV;
}

int cmd_lab_autograde(int argc, char **argv)
{
	ag_opts o;
	int rc = parse(argc, argv, &o, false);
	if (rc != CLI_OK)
		return rc < 0 ? CLI_OK : rc;
	char path[4400], err[4600];
	snprintf(path, sizeof path, "%s/source/%s", o.root, AG_CONFIG);
	ag_config c;
	ex_set set = { 0 };
	json_t *res = NULL;
	mp_status st = ag_config_load(&c, path, err, sizeof err);
	if (st == MP_OK && (rc = cli_load_exercises("lab", o.dir, &set, true)) != CLI_OK) {
		snprintf(err, sizeof err, "the exercises cannot be loaded");
		st = MP_EIO;
		ag_config_free(&c);
	}
	if (st != MP_OK) {
		cli_error("lab", "%s", err);
		res = ag_results_broken(err);
		rc = CLI_ENV;
	} else {
		st = ag_grade(o.root, &c, &set, &res);
		ag_config_free(&c);
		ex_set_free(&set);
	}
	if (!res) {
		cli_error("lab", "out of memory");
		return CLI_ENV;
	}
	if (ag_results_write(o.root, res, err, sizeof err) != MP_OK) {
		cli_error("lab", "%s", err);
		rc = CLI_ENV;
	} else {
		/* results/stdout, which the instructor sees */
		printf("score %g\n%s\n", json_real_value(json_object_get(res, "score")),
		       json_string_value(json_object_get(res, "output")));
	}
	json_decref(res);
	return cli_flush_stdout("lab") ? rc : CLI_ENV;
}
