/* tessera-holder-monitor-private.h: whether lock files' holders still run, never installed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include "tessera-host-lease-private.h"
#include "tessera-lock-folder-private.h"
#include "tessera-verdict-private.h"

G_BEGIN_DECLS

/* What a liveness verdict reads of one lock file in jobs/, and what it
 * remembers between verdicts. The lock file cache embeds one in each of
 * its entries and owns its members. */
typedef struct
{
  char *name;                         /* its name in jobs/ */
  TesseraDynamicLockFile *lock_file;  /* NULL: unreadable or not a file */
  ino_t ino;
  gint64 mtime_ns;
  goffset size;
  TesseraProcess *process;            /* from the file or from <job_uri>.pid */
  /* Bits: one of these is in each of a fresh process's 10 000 entries. */
  guint spec_unreadable : 1;          /* the file's "process" could not be read: unknown, no .pid asked */
  guint watched : 1;
  guint lock_seen_held : 1;           /* its job lock was seen held: its job ran */
  gint64 first_seen_us;               /* monotonic: when this host first saw it; 0: not asked */
  gint64 lock_free_since_us;          /* monotonic: its job lock first seen free; 0: not */
} TesseraHolder;

/* Liveness verdicts (pid and start time, host, job lock), pidfd watches
 * within a budget for the whole process, and exit notifications. Not
 * thread-safe: the owner serialises (the resource's thread lock); exit
 * notifications run in the watch context and must take that lock. */
typedef struct _TesseraHolderMonitor TesseraHolderMonitor;

/* A watched holder @pid exited: called in the watch context, with none of
 * the owner's locks; @serial tells this watch from a later one. */
typedef void (*TesseraHolderExitedFunc) (gpointer data,
                                         GPid     pid,
                                         guint64  serial);

/* @folder: borrowed, outlives the result. @data: owned (@unref frees it);
 * every pending watch holds a reference of its own (@ref). */
TesseraHolderMonitor *_tessera_holder_monitor_new (TesseraLockFolder       *folder,
                                                   GMainContext            *context,
                                                   TesseraHolderExitedFunc  func,
                                                   gpointer                 data,
                                                   gpointer               (*ref) (gpointer data),
                                                   GDestroyNotify           unref);
void     _tessera_holder_monitor_free         (TesseraHolderMonitor *monitor);
/* The pool's host lease (owned by the monitor; renewals run in its
 * context). */
TesseraHostLease *_tessera_holder_monitor_get_lease (TesseraHolderMonitor *monitor);
/* Drops every watch: no exit is notified any more. */
void     _tessera_holder_monitor_stop         (TesseraHolderMonitor *monitor);

/* Watches @holder's process (alive and local) for its exit, when the
 * pidfd budget allows; else it stays to be polled. */
void     _tessera_holder_monitor_watch        (TesseraHolderMonitor *monitor,
                                               TesseraHolder        *holder);
void     _tessera_holder_monitor_unwatch      (TesseraHolderMonitor *monitor,
                                               TesseraHolder        *holder);
/* (transfer full) (nullable): the names of the lock files the watch
 * @serial of @pid was for, when it is still the current one (it is then
 * dropped), else NULL. */
GHashTable *_tessera_holder_monitor_take_exited (TesseraHolderMonitor *monitor,
                                                 GPid                  pid,
                                                 guint64               serial);

typedef enum {
  TESSERA_HOLDER_HOLDS,             /* counts; judged again at every refresh */
  TESSERA_HOLDER_HOLDS_UNATTENDED,  /* counts; watched, or cannot be judged: no need to look again */
  TESSERA_HOLDER_GONE,              /* surely gone: its lock file may go */
} TesseraHolderVerdict;

/* Whether the holder of a valid lock file is gone (then @reason says
 * why). Only a sure verdict frees capacity: what cannot be judged counts.
 * @min_age: how long this host must have seen a lock file without a
 * process, or an experimaestro job lock free. Under ipc.lock. */
TesseraHolderVerdict _tessera_holder_monitor_judge (TesseraHolderMonitor *monitor,
                                                    TesseraHolder        *holder,
                                                    double                min_age,
                                                    char                **reason);
/* Whether this host has seen the file unchanged for @min_age. */
gboolean _tessera_holder_monitor_seen_for      (TesseraHolderMonitor *monitor,
                                                TesseraHolder        *holder,
                                                double                min_age);
/* Whether locks on the pool's file system are seen by other hosts (read
 * once from mountinfo). */
gboolean _tessera_holder_monitor_locks_cross_hosts (TesseraHolderMonitor *monitor);

/* Whether a job lock in the job folder of @job_uri (@folder_dev: its
 * device, when @folder_known; else set to it, the view of the pool the
 * job lock is taken through) is taken where locks cross hosts, for its
 * process spec: 1 they do, 0 they do not, -1 the folder cannot be seen. */
int      _tessera_holder_monitor_job_locks_cross (TesseraHolderMonitor *monitor,
                                                  const char           *job_uri,
                                                  gboolean              folder_known,
                                                  guint64              *folder_dev);
/* FALSE with TESSERA_ERROR_INVALID_CONFIGURATION (naming the fix) when
 * the hosts' marks show two hosts of which one's locks do not cross
 * hosts, or, where ours do not, when one of @lock_files (the valid ones;
 * NULL where they cross) has a holder on another host: such a pool
 * cannot be shared safely. Marks this host first. Under ipc.lock. */
gboolean _tessera_holder_monitor_check_hosts   (TesseraHolderMonitor  *monitor,
                                                GPtrArray             *lock_files,
                                                GError               **error);
/* Whether this host has seen a waiter's entry unchanged for min-age (the
 * queue remembers it): asked by _tessera_holder_monitor_judge_waiter()
 * only when the verdict needs it. */
typedef gboolean (*TesseraEntryUnrenewedFunc) (gpointer data);

/* The verdict on the waiter of a queue entry (@entry, read as a lock
 * file; @owner: its file's owner), _tessera_verdict_decide()'s, whose
 * probes this gathers: its process (tessera_process_check()), whose user
 * it is, its host's lease on @store, its job lock, and whether the queue
 * saw the entry unrenewed for min-age (@unrenewed). *@reason: why it is
 * DEAD, or NULL (owned). Only DEAD frees what it reserves. */
struct _TesseraPoolStore;
TesseraVerdict _tessera_holder_monitor_judge_waiter (TesseraDynamicLockFile    *entry,
                                                     uid_t                      owner,
                                                     struct _TesseraPoolStore  *store,
                                                     TesseraEntryUnrenewedFunc  unrenewed,
                                                     gpointer                   data,
                                                     char                     **reason);

/* The lock file was removed: this host forgets what it saw of it. */
void     _tessera_holder_monitor_forget        (TesseraHolderMonitor *monitor,
                                                TesseraHolder        *holder);

G_END_DECLS
