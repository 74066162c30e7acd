/*
 * Bottleneck rules. A rule is one file in rules/ holding a `const struct rule rule_<id>` descriptor
 * (id, title, what it measures, the fix, its parameters with default thresholds) and one function
 * that reads a trace through the canonical views of analyzer/loader/trace.h and appends findings.
 * The rule table in registry.c lists every rule, one line each; `gpt-trace rules` prints it.
 *
 * A finding carries the rule id, a severity, a one-line message, evidence lines (kernel names,
 * counts, time ranges, source lines), the time it would recover if fixed, and a concrete fix.
 * Reports rank findings by recoverable time.
 */
#ifndef GPT_RULES_RULE_H
#define GPT_RULES_RULE_H

#include "analyzer/analysis/analysis.h"
#include "analyzer/loader/trace.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct what_if_fix;

enum finding_severity {
	SEVERITY_INFO = 0,	/* worth knowing, little time at stake */
	SEVERITY_WARNING = 1,
	SEVERITY_CRITICAL = 2,	/* a large share of the run is at stake */
};

struct finding {
	const char *rule_id;		/* the rule's id; static storage */
	enum finding_severity severity;
	char *message;			/* one line */
	char *fix;			/* one or two sentences: what to change */
	char **evidence;		/* human-readable lines */
	size_t nevidence;
	int64_t recoverable_ns;		/* estimated time saved if fixed; 0 if unknown */
	int64_t start, end;		/* where on the trace's clock the evidence lies; 0, 0 if nowhere */
	int32_t device;			/* device id the finding is about, -1 for none */
	int64_t stream;			/* stream id, -1 for none */
	int owner; /* enum kernel_owner (analyzer/analysis/owner.h) of the kernels it is about, the
		      dominant one by time; -1 when it is about no kernel */
	/* The fix as the what-if replay applies it (analyzer/analysis/what-if.h); NULL when the
	 * replay does not model this rule's fix. Owned. */
	struct what_if_fix *what_if;
};

/* A growable list of findings. Zero-initialise; release with findings_release(). */
struct findings {
	struct finding *items;
	size_t count, cap;
};

/* A tunable threshold with its default. */
struct rule_param {
	const char *name;		/* e.g. "max_duration_us" */
	double default_value;
	const char *unit;		/* e.g. "us", "%", "count" */
	const char *help;
};

struct rule_config;
struct phases;
struct program_state;
struct rule;
struct gap_visitor;
struct gap_walk;

/* What a rule gets to work with. */
struct rule_context {
	/* The analyses' context: the trace in its scope, where evidence times count from (origin 0:
	 * the first event in the scope), and who asks, set by rule_enter() for each rule run. */
	struct analysis_context an;
	const struct rule_config *config;
	struct findings *out;
	/* The phases, when the scope is their steady state (per-iteration counts); NULL otherwise. */
	const struct phases *steady;
	/* rules_run()'s cache of what the program already does (rules/program-state.h), read by the
	 * first rule that advises; NULL outside rules_run(), where each read is made anew. */
	struct program_state *program;
	char who[80]; /* "rule <id>": an.who while that rule runs */
};

/* ctx is now the context of rule's run: its error lines start "rule <id>: ". */
void rule_enter(struct rule_context *ctx, const struct rule *rule);

struct rule {
	const char *id;			/* e.g. "small-kernels" */
	const char *title;
	const char *measures;		/* what it measures, one sentence */
	const struct rule_param *params;
	size_t nparams;
	/* Returns 0, or a negative error with one line in err (a SQL failure, say). */
	int (*run)(const struct rule *rule, struct rule_context *ctx, char *err, size_t errlen);
	/*
	 * Rules that read the time-ordered walk (analyzer/analysis/gaps.h) set these, and run =
	 * rule_walk_run, so that rules_run() can feed every such rule from one shared walk: begin
	 * prepares the rule's state and fills its visitor (a visitor without fn takes no part);
	 * after the walk, finish turns the state into findings. finish always frees the state, and
	 * gets walk NULL when the walk failed.
	 */
	int (*begin)(const struct rule *rule, struct rule_context *ctx, struct gap_visitor *visitor,
		     void **state, char *err, size_t errlen);
	int (*finish)(const struct rule *rule, struct rule_context *ctx, void *state,
		      const struct gap_walk *walk, char *err, size_t errlen);
};

/* run for the rules that read the walk: begin, a walk of its own, finish. */
int rule_walk_run(const struct rule *rule, struct rule_context *ctx, char *err, size_t errlen);

/*
 * Run n rules over the trace: the ones that read the walk share one walk, the others run in turn.
 * timings: when not NULL, one line per rule (and one for the shared walk) with its run time.
 * Returns 0, or the first failure: a negative error with one line in err.
 */
int rules_run(const struct rule *const *rules, size_t n, struct rule_context *ctx, FILE *timings, char *err,
	      size_t errlen);

/* Every rule, in report order; NULL-terminated. */
extern const struct rule *const rule_table[];
const struct rule *rule_find(const char *id);

/*
 * Thresholds: defaults from the descriptors, overridden from a config file and from the command line
 * ("small-kernels.max_duration_us=3"). A rule reads its values through rule_param().
 */
struct rule_config *rule_config_new(void);
void rule_config_free(struct rule_config *config);
/* "rule-id.param=value"; returns a negative error with one line in err for an unknown rule/param. */
int rule_config_set(struct rule_config *config, const char *assignment, char *err, size_t errlen);
/* INI-style file: [rule-id] lines, then "param = value" lines; '#' comments. */
int rule_config_load(struct rule_config *config, const char *path, char *err, size_t errlen);
double rule_param(const struct rule_context *ctx, const struct rule *rule, const char *name);

/* Append a finding (deep-copies message and fix; evidence is added with finding_evidence()). */
struct finding *findings_add(struct findings *list, const struct rule *rule, enum finding_severity severity,
			     int64_t recoverable_ns, const char *fix, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
void finding_evidence(struct finding *finding, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The finding's fix for the what-if replay (taken over; replaces one set before). */
void finding_what_if(struct finding *finding, struct what_if_fix *fix);
/* Sort by recoverable time, largest first (ties: severity, then rule id). */
void findings_rank(struct findings *list);
void findings_release(struct findings *list);
/* A finding's severity from the time it would recover against the span: critical from 20%, warning
 * from 5%, info below. */
enum finding_severity rule_severity(int64_t recoverable_ns, int64_t span_ns);

#endif
