/* Slurm job scripts for the commands that reach a cluster (`bench --slurm`, `evaluate
 * --slurm`): the options they share (partition, time, CPUs, memory, array limit, dry run),
 * an sbatch script's #SBATCH head, shell quoting for its body, and submission with
 * `sbatch --parsable` (optionally after another job). */
#include "cli.h"

#include "runlab/error.h"
#include "runlab/fs.h"
#include "runlab/json.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void cli_shell_quote(FILE *f, const char *text)
{
    fputc('\'', f);
    for (const char *c = text; *c; c++) {
        if (*c == '\'')
            fputs("'\\''", f);
        else
            fputc(*c, f);
    }
    fputc('\'', f);
}

/* A Slurm option's value: printable, no spaces or quotes (it goes on an #SBATCH line). */
static bool plain_value(const char *v)
{
    if (!*v || strlen(v) > 200)
        return false;
    for (const char *c = v; *c; c++)
        if (*c <= ' ' || *c == '\'' || *c == '"' || *c == '\\' || *c == 0x7f)
            return false;
    return true;
}

int cli_slurm_option(const char *cmd, const char *name, const char *arg, cli_slurm_opts *so)
{
    double num;
    if (strcmp(name, "dry-run") == 0) {
        so->dry_run = true;
    } else if (strcmp(name, "cpus-per-task") == 0 || strcmp(name, "array-limit") == 0) {
        bool cpus = name[0] == 'c';
        if (cli_parse_number(cmd, cpus ? "--cpus-per-task" : "--array-limit", arg, 1,
                             cpus ? 4096 : 100000, 1, &num) != RL_EXIT_OK)
            return -1;
        *(cpus ? &so->cpus : &so->array_limit) = (long)num;
    } else if (strcmp(name, "partition") == 0 || strcmp(name, "time") == 0 ||
               strcmp(name, "mem") == 0) {
        if (!plain_value(arg)) {
            cli_usage_error(cmd, "--%s '%s': a Slurm value without spaces or quotes", name, arg);
            return -1;
        }
        *(name[0] == 'p' ? &so->partition : name[0] == 't' ? &so->time : &so->mem) = arg;
    } else {
        return 0;
    }
    return 1;
}

int cli_slurm_script(const char *path, const char *comment, const char *job_name,
                     const cli_slurm_opts *so, unsigned array_n, const char *output,
                     const char *body)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return rl_error_set_errno(RL_EIO, errno, "%s", path);
    fprintf(f, "#!/bin/bash\n%s#SBATCH --job-name=%s\n", comment, job_name);
    if (array_n) {
        fprintf(f, "#SBATCH --array=1-%u", array_n);
        if (so->array_limit > 0)
            fprintf(f, "%%%ld", so->array_limit);
        fputc('\n', f);
        if (so->cpus > 0)
            fprintf(f, "#SBATCH --cpus-per-task=%ld\n", so->cpus);
        if (so->mem)
            fprintf(f, "#SBATCH --mem=%s\n", so->mem);
    }
    fprintf(f, "#SBATCH --output=%s\n", output);
    if (so->partition)
        fprintf(f, "#SBATCH --partition=%s\n", so->partition);
    if (so->time)
        fprintf(f, "#SBATCH --time=%s\n", so->time);
    fputs(body, f);
    return fclose(f) == 0 ? RL_OK : rl_error_set_errno(RL_EIO, errno, "%s", path);
}

int cli_slurm_submit(const char *script, const char *after, char *id, size_t cap)
{
    int fds[2];
    if (pipe(fds) < 0)
        return rl_error_set_errno(RL_EIO, errno, "pipe");
    char depend[128];
    snprintf(depend, sizeof depend, "--dependency=afterany:%s", after ? after : "");
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return rl_error_set_errno(RL_EIO, errno, "fork");
    }
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        if (after)
            execlp("sbatch", "sbatch", "--parsable", depend, script, (char *)NULL);
        else
            execlp("sbatch", "sbatch", "--parsable", script, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    size_t len = 0;
    ssize_t r;
    while (len + 1 < cap && (r = read(fds[0], id + len, cap - 1 - len)) != 0) {
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            break;
        len += (size_t)r;
    }
    id[len] = '\0';
    close(fds[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    id[strcspn(id, ";\n")] = '\0'; /* "ID" or "ID;cluster" */
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || !id[0])
        return rl_error_set(RL_EIO, "sbatch %s failed (%s); the script is there to submit by "
                            "hand", script, WIFEXITED(st) && WEXITSTATUS(st) == 127
                                                ? "sbatch not found: is Slurm installed here?"
                                                : "see its message above");
    return RL_OK;
}

int cli_slurm_job_dir(const char *root, const char *name, const char *sub, char *abs_dir,
                      char *slurm_dir, char *sub_dir)
{
    char dir[PATH_MAX];
    int rc = rl_fs_mkdirs(root);
    if (rc == RL_OK)
        rc = rl_fs_mkdir_new(root, name, RL_MKDIR_ADD_SUFFIX, dir, sizeof dir);
    if (rc == RL_OK && !realpath(dir, abs_dir))
        rc = rl_error_set_errno(RL_EIO, errno, "%s", dir);
    if (rc == RL_OK)
        rc = rl_fs_mkdir_in(abs_dir, "slurm", slurm_dir, PATH_MAX);
    if (rc == RL_OK)
        rc = rl_fs_mkdir_in(abs_dir, sub, sub_dir, PATH_MAX);
    return rc;
}

int cli_slurm_submit_pair(const char *slurm_dir, const char *array_script,
                          const char *then_script, const char *then_key, const char *count_key,
                          long count, char *array_id, char *then_id, size_t cap)
{
    fflush(stdout); /* sbatch's own messages come after ours */
    int rc = cli_slurm_submit(array_script, NULL, array_id, cap);
    if (rc == RL_OK)
        rc = cli_slurm_submit(then_script, array_id, then_id, cap);
    if (rc < 0)
        return rc;
    json_object *jobs = json_object_new_object();
    json_object_object_add(jobs, "array_job", json_object_new_string(array_id));
    json_object_object_add(jobs, then_key, json_object_new_string(then_id));
    json_object_object_add(jobs, count_key, json_object_new_int64(count));
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%.4000s/jobs.json", slurm_dir);
    rc = rl_json_write_file(path, jobs);
    json_object_put(jobs);
    return rc;
}
