/* Output files that never look complete unless they are: a kb_outfile is
 * written to a temporary file beside its target, named ".NAME.partial.PID",
 * and renamed over the target only when kb_outfile_commit has flushed,
 * synced and closed it without an error. A run that is killed leaves the
 * temporary file (obviously partial) and no target; one that fails removes
 * it. An existing target that is not a regular file (/dev/null,
 * /dev/stdout, a FIFO) cannot be replaced by a rename: it is written
 * directly, and its write errors are still reported. Reference:
 * docs/cli.md ("Output files"). */
#ifndef KB_TRACE_OUTFILE_H
#define KB_TRACE_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

typedef struct kb_outfile kb_outfile;

/* Checks `path` and opens its temporary file (or the device itself).
 * `what` names the output in messages ("--trace", "kb.open_output").
 * NULL with *err (allocated) naming the path and what is wrong: a missing
 * or unwritable directory, a directory given as the file, a read-only
 * file. */
kb_outfile *kb_outfile_open(const char *path, const char *what, char **err);

/* The stream to write to (full buffering). */
FILE *kb_outfile_stream(const kb_outfile *o);
/* The target as given, and the file written now (the temporary file, or
 * the target itself when written directly). */
const char *kb_outfile_path(const kb_outfile *o);
const char *kb_outfile_temp(const kb_outfile *o);
/* The directory the target lives in, when it is replaced by a rename
 * (else NULL): where spill files of the same output belong. */
const char *kb_outfile_dir(const kb_outfile *o);
/* Whether two open outputs would replace the same file (same inode, or
 * the same directory and name for files still to be created). Devices
 * and FIFOs, written directly, may be shared (/dev/null twice). */
bool kb_outfile_same(const kb_outfile *a, const kb_outfile *b);

/* Flushes, syncs and closes the file, then renames it over the target.
 * False with *err (allocated) if anything failed; the temporary file is
 * then removed and the target left as it was. Frees o. */
bool kb_outfile_commit(kb_outfile *o, char **err);
/* Closes and removes the temporary file; the target is left as it was.
 * Frees o (NULL: nothing). */
void kb_outfile_abort(kb_outfile *o);

#endif
