/*
 * Rule thresholds: every parameter starts at its descriptor's default; a config file and
 * "rule-id.param=value" assignments (from the command line) override them, later ones winning.
 * A config holds only the overrides, one entry per (rule, parameter), so it stays tiny. Unknown rules,
 * unknown parameters and values that are not plain non-negative numbers are errors with one line
 * naming the culprit, never silently ignored: a misspelt threshold would otherwise look like a
 * clean report.
 */
#include "rules/rule.h"

#include "common/util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rule_override {
	const struct rule *rule;
	size_t param;
	double value;
};

struct rule_config {
	struct rule_override *items;
	size_t count, cap;
};

struct rule_config *rule_config_new(void)
{
	return xcalloc(1, sizeof(struct rule_config));
}

void rule_config_free(struct rule_config *config)
{
	if (!config)
		return;
	free(config->items);
	free(config);
}

static long find_param(const struct rule *rule, const char *name, size_t len)
{
	for (size_t i = 0; i < rule->nparams; i++)
		if (strlen(rule->params[i].name) == len && !strncmp(rule->params[i].name, name, len))
			return (long)i;
	return -1;
}

static void override(struct rule_config *config, const struct rule *rule, size_t param, double value)
{
	for (size_t i = 0; i < config->count; i++) {
		if (config->items[i].rule == rule && config->items[i].param == param) {
			config->items[i].value = value;
			return;
		}
	}
	if (config->count == config->cap) {
		config->cap = config->cap ? 2 * config->cap : 8;
		config->items = xrealloc(config->items, config->cap * sizeof(*config->items));
	}
	config->items[config->count++] = (struct rule_override){ rule, param, value };
}

static void trim(const char **s, size_t *len)
{
	while (*len && isspace((unsigned char)**s)) {
		(*s)++;
		(*len)--;
	}
	while (*len && isspace((unsigned char)(*s)[*len - 1]))
		(*len)--;
}

static void list_params(const struct rule *rule, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < rule->nparams && used < len; i++) {
		int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", rule->params[i].name);

		if (n < 0)
			break;
		used += (size_t)n;
	}
}

/*
 * Apply one override given as separate (possibly untrimmed, not NUL-terminated) pieces; where is a
 * prefix for error messages ("" or "'file.ini' line 3: ").
 */
static int apply(struct rule_config *config, const char *where, const char *id, size_t idlen,
		 const char *param, size_t paramlen, const char *value, size_t valuelen, char *err,
		 size_t errlen)
{
	const struct rule *rule = NULL;
	char idbuf[64], valbuf[64], params[256];
	char *end;
	double v;
	long p;

	trim(&id, &idlen);
	trim(&param, &paramlen);
	trim(&value, &valuelen);
	if (!idlen || !paramlen || !valuelen) {
		snprintf(err, errlen, "%sinvalid threshold assignment: expected rule.param=value", where);
		return -EINVAL;
	}
	snprintf(idbuf, sizeof(idbuf), "%.*s", (int)idlen, id);
	if (idlen < sizeof(idbuf))
		rule = rule_find(idbuf);
	if (!rule) {
		snprintf(err, errlen, "%sunknown rule '%.*s' (gpt-trace rules lists them)", where, (int)idlen,
			 id);
		return -ENOENT;
	}
	p = find_param(rule, param, paramlen);
	if (p < 0) {
		list_params(rule, params, sizeof(params));
		snprintf(err, errlen, "%sunknown parameter '%.*s' for rule '%s' (its parameters: %s)", where,
			 (int)paramlen, param, rule->id, params);
		return -ENOENT;
	}
	if (valuelen >= sizeof(valbuf)) {
		snprintf(err, errlen, "%sinvalid value for %s.%s: too long", where, rule->id,
			 rule->params[p].name);
		return -EINVAL;
	}
	snprintf(valbuf, sizeof(valbuf), "%.*s", (int)valuelen, value);
	errno = 0;
	v = strtod(valbuf, &end);
	if (errno || end == valbuf || *end || !isfinite(v)) {
		snprintf(err, errlen, "%sinvalid value '%s' for %s.%s: not a number", where, valbuf,
			 rule->id, rule->params[p].name);
		return -EINVAL;
	}
	if (v < 0) {
		snprintf(err, errlen, "%sinvalid value '%s' for %s.%s: must not be negative", where, valbuf,
			 rule->id, rule->params[p].name);
		return -EINVAL;
	}
	override(config, rule, (size_t)p, v);
	return 0;
}

int rule_config_set(struct rule_config *config, const char *assignment, char *err, size_t errlen)
{
	const char *dot = strchr(assignment, '.');
	const char *eq = strchr(assignment, '=');

	if (!dot || !eq || dot > eq) {
		snprintf(err, errlen, "invalid threshold '%s': expected rule.param=value", assignment);
		return -EINVAL;
	}
	return apply(config, "", assignment, (size_t)(dot - assignment), dot + 1, (size_t)(eq - dot - 1),
		     eq + 1, strlen(eq + 1), err, errlen);
}

int rule_config_load(struct rule_config *config, const char *path, char *err, size_t errlen)
{
	char line[1024], where[300], section[64] = "";
	unsigned lineno = 0;
	FILE *f = fopen(path, "r");
	int ret = 0;

	if (!f) {
		snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
		return -errno;
	}
	while (fgets(line, sizeof(line), f)) {
		char *s = line, *hash, *eq, *close, *dot;
		size_t len;

		lineno++;
		snprintf(where, sizeof(where), "'%s' line %u: ", path, lineno);
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(err, errlen, "%sline too long", where);
			ret = -EINVAL;
			goto out_close;
		}
		hash = strchr(s, '#');
		if (hash)
			*hash = '\0';
		len = strlen(s);
		while (len && isspace((unsigned char)s[len - 1]))
			s[--len] = '\0';
		while (isspace((unsigned char)*s)) {
			s++;
			len--;
		}
		if (!len)
			continue;
		if (s[0] == '[') {
			const char *id = s + 1;

			close = strchr(s, ']');
			if (!close || close[1]) {
				snprintf(err, errlen, "%sexpected [rule-id]", where);
				ret = -EINVAL;
				goto out_close;
			}
			*close = '\0';
			len = strlen(id);
			trim(&id, &len);
			s[(id - s) + len] = '\0';
			if (!len || len >= sizeof(section) || !rule_find(id)) {
				snprintf(err, errlen, "%sunknown rule '%s' (gpt-trace rules lists them)", where, id);
				ret = -ENOENT;
				goto out_close;
			}
			snprintf(section, sizeof(section), "%s", id);
			continue;
		}
		eq = strchr(s, '=');
		if (!eq) {
			snprintf(err, errlen, "%sexpected 'param = value'", where);
			ret = -EINVAL;
			goto out_close;
		}
		/* A key with a dot names its rule, in a section or not: "small-kernels.min_launches = 50"
		 * (parameter names have no dots). */
		dot = memchr(s, '.', (size_t)(eq - s));
		if (!dot && section[0]) {
			ret = apply(config, where, section, strlen(section), s, (size_t)(eq - s), eq + 1,
				    strlen(eq + 1), err, errlen);
		} else {
			if (!dot) {
				snprintf(err, errlen, "%sparameter outside a [rule-id] section", where);
				ret = -EINVAL;
				goto out_close;
			}
			ret = apply(config, where, s, (size_t)(dot - s), dot + 1, (size_t)(eq - dot - 1),
				    eq + 1, strlen(eq + 1), err, errlen);
		}
		if (ret < 0)
			goto out_close;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
		ret = -EIO;
	}
out_close:
	fclose(f);
	return ret;
}

double rule_param(const struct rule_context *ctx, const struct rule *rule, const char *name)
{
	long p = find_param(rule, name, strlen(name));

	/* A rule asking for a parameter it does not declare is a bug in the rule; its tests catch it. */
	if (p < 0)
		return NAN;
	if (ctx && ctx->config) {
		for (size_t i = 0; i < ctx->config->count; i++)
			if (ctx->config->items[i].rule == rule && ctx->config->items[i].param == (size_t)p)
				return ctx->config->items[i].value;
	}
	return rule->params[p].default_value;
}
