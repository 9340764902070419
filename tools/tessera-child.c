/* tessera-child.c: the life of the command `tessera run` starts: forked
 * early, it waits behind a gate until its resources are held, and runs
 * with the signals, mask and limits the wrapper started with; the run's
 * signals, caught on a thread of their own, end the wait or are
 * forwarded to it; its death at the gate ends the wait; its end is the
 * run's.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <glib-unix.h>
#include <glib/gi18n-lib.h>
#include <signal.h>
#include <string.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tessera-lock-wait.h"
#include "tessera-output.h"

#include "tessera-child.h"

/* The signal mask and the ignored signals this process started with: the
 * command gets them back, as from nohup(1) or flock(1). */
static sigset_t start_mask;
static sigset_t start_ignored;
/* And its descriptor limit, which main() may raise (see
 * ensure_descriptors()): the command gets it back too. */
struct rlimit start_nofile;
gboolean start_nofile_raised;

/* A signal mask of /proc/self/status (@field: "\nSigIgn:"): bit N-1 for
 * signal N. FALSE when it is not there, or cut short. */
static gboolean
status_signal_mask (const char *status, const char *field, guint64 *mask)
{
  const char *start = strstr (status, field);
  char *end;

  if (start == NULL)
    return FALSE;
  start += strlen (field);
  *mask = g_ascii_strtoull (start, &end, 16);
  return end != start && *end == '\n';
}

/* The signals this process ignores and those it catches, from
 * /proc/self/status: one open, read and close instead of a sigaction()
 * per signal. FALSE when it cannot be read (no /proc). */
static gboolean
read_signal_dispositions (guint64 *ignored, guint64 *caught)
{
  char status[16384];
  size_t len = 0;
  ssize_t n;
  int fd = open ("/proc/self/status", O_RDONLY | O_CLOEXEC | O_NOCTTY);

  if (fd < 0)
    return FALSE;
  /* Bounded: the masks come after the Groups line, which a user of
   * hundreds of groups makes kilobytes long; beyond, the loops are used. */
  while (len < sizeof status - 1)
    {
      n = read (fd, status + len, sizeof status - 1 - len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      len += (size_t) n;
    }
  close (fd);
  status[len] = '\0';
  return status_signal_mask (status, "\nSigIgn:", ignored) && status_signal_mask (status, "\nSigCgt:", caught);
}

void
remember_start_signals (void)
{
  guint64 ignored, caught;

  sigemptyset (&start_ignored);
  pthread_sigmask (SIG_SETMASK, NULL, &start_mask);
  if (read_signal_dispositions (&ignored, &caught))
    {
      /* sigaddset() refuses the C library's own signals, as sigaction()
       * does in the loop below. */
      for (int sig = 1; sig < NSIG && sig <= 64; sig++)
        if (ignored & (G_GUINT64_CONSTANT (1) << (sig - 1)))
          sigaddset (&start_ignored, sig);
      return;
    }
  for (int sig = 1; sig < NSIG; sig++)
    {
      struct sigaction sa;

      if (sigaction (sig, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN)
        sigaddset (&start_ignored, sig);
    }
}

/* The signals the command's process sets back to what they were at start
 * (see gated_spawn()). */
typedef struct
{
  int count;
  int signals[NSIG];
} SignalsToRestore;

/* Worked out before the fork (the child may only use the result): those
 * ignored now but not at start, or the other way round, and those this
 * process catches, whose handlers must not run in the child while it
 * waits at its gate (nor in a watcher), and which exec would leave at
 * SIG_DFL where SIG_IGN was asked. Exact as long as no thread changes a
 * disposition until the fork: ours do not (the signal thread waits with
 * sigtimedwait()), but GLib sets SIGCHLD's handler, and takes it back,
 * whenever a thread waits for a subprocess (slurm's probes), so SIGCHLD
 * is always in the list. */
static void
signals_to_restore (SignalsToRestore *restore)
{
  guint64 ignored, caught;
  /* Without /proc: all of them. */
  gboolean all = !read_signal_dispositions (&ignored, &caught);

  restore->count = 0;
  for (int sig = 1; sig < NSIG; sig++)
    {
      guint64 bit = sig <= 64 ? G_GUINT64_CONSTANT (1) << (sig - 1) : 0;
      gboolean was_ignored = sigismember (&start_ignored, sig) == 1;

      if (sig == SIGKILL || sig == SIGSTOP)
        continue;
      if (all || sig == SIGCHLD || (caught & bit) || (!!(ignored & bit)) != was_ignored)
        restore->signals[restore->count++] = sig;
    }
}

gboolean gate_die_with_wrapper;   /* set before the fork */

/* The watcher's part (see gated_watch). Async-signal-safe calls only. */

/* Ends like @wstatus says: the same exit code, or the same signal (with
 * no core: the command already dumped its own, if any). */
G_GNUC_NORETURN static void
watcher_exit_like (int wstatus)
{
  if (WIFSIGNALED (wstatus))
    {
      int sig = WTERMSIG (wstatus);
      struct rlimit no_core = { 0, 0 };
      struct sigaction dfl = { 0 };
      sigset_t one;

      setrlimit (RLIMIT_CORE, &no_core);
      dfl.sa_handler = SIG_DFL;
      sigaction (sig, &dfl, NULL);
      sigemptyset (&one);
      sigaddset (&one, sig);
      kill (getpid (), sig);
      pthread_sigmask (SIG_UNBLOCK, &one, NULL);
      _exit (128 + sig);
    }
  _exit (WEXITSTATUS (wstatus));
}

/* Whether /proc is our pid namespace's: /proc/self names our pid. */
static gboolean
watcher_proc_is_ours (void)
{
  char link[32];
  ssize_t n = readlink ("/proc/self", link, sizeof link - 1);
  long pid = 0;

  if (n <= 0)
    return FALSE;
  for (ssize_t i = 0; i < n; i++)
    {
      if (link[i] < '0' || link[i] > '9')
        return FALSE;
      pid = pid * 10 + (link[i] - '0');
    }
  return pid == (long) getpid ();
}

/* The wrapper is gone: SIGKILL to every child of ours (the command, and
 * the orphans that came back to us, their subreaper) until none is left.
 * A killed process's children come back to us before we can reap it, so
 * the next round finds them. */
G_GNUC_NORETURN static void
watcher_end_all (pid_t command)
{
  const struct timespec tick = { 0, 5 * 1000 * 1000 };

  kill (command, SIGKILL);
  /* A /proc of another pid namespace (its pids are not ours to kill), or
   * a kernel that lists no children: the command only. */
  if (!watcher_proc_is_ours () || access ("/proc/thread-self/children", R_OK) < 0)
    {
      while (waitpid (command, NULL, 0) < 0 && errno == EINTR)
        ;
      _exit (128 + SIGKILL);
    }
  for (;;)
    {
      int fd = open ("/proc/thread-self/children", O_RDONLY | O_CLOEXEC);
      pid_t reaped;

      if (fd >= 0)
        {
          char buffer[512];
          long pid = 0;
          ssize_t n;

          while ((n = read (fd, buffer, sizeof buffer)) > 0)
            for (ssize_t i = 0; i < n; i++)
              {
                if (buffer[i] >= '0' && buffer[i] <= '9')
                  pid = pid * 10 + (buffer[i] - '0');
                else
                  {
                    if (pid > 0)
                      kill ((pid_t) pid, SIGKILL);
                    pid = 0;
                  }
              }
          if (pid > 0)
            kill ((pid_t) pid, SIGKILL);
          close (fd);
        }
      reaped = waitpid (-1, NULL, WNOHANG);
      if (reaped < 0 && errno == ECHILD)
        _exit (128 + SIGKILL);
      if (reaped < 0 && errno != EINTR)
        _exit (128 + SIGKILL);
      if (reaped == 0)
        nanosleep (&tick, NULL);
    }
}

/* On a lease pool, the process the lock files name is a watcher: it
 * forks the command, becomes the subreaper of everything the command
 * starts, and when the wrapper dies (the gate's other end closes, even
 * on SIGKILL) it kills all of them; a PR_SET_PDEATHSIG would reach the
 * command only. It passes on the signals a process sends it (the
 * wrapper forwarding SIGINT, SIGTERM, SIGHUP; --on-lost=end) to the
 * command, not those of the terminal (the command got them too), and
 * ends as the command does. Returns in the command's process. */
static void
gated_watch (int gate, int report)
{
  const int passed[] = { SIGINT, SIGQUIT, SIGTERM, SIGHUP };
  struct sigaction dfl = { 0 };
  pid_t watcher = getpid ();
  pid_t command;
  sigset_t set;
  int sfd, err;

  /* Ignored at start (nohup), a signal stays ignored by both. */
  sigemptyset (&set);
  sigaddset (&set, SIGCHLD);
  for (guint i = 0; i < G_N_ELEMENTS (passed); i++)
    if (!sigismember (&start_ignored, passed[i]))
      sigaddset (&set, passed[i]);
  dfl.sa_handler = SIG_DFL;
  sigaction (SIGCHLD, &dfl, NULL);   /* ignored, no status would come */
  pthread_sigmask (SIG_BLOCK, &set, NULL);
  sfd = signalfd (-1, &set, SFD_CLOEXEC);
  if (sfd < 0 || prctl (PR_SET_CHILD_SUBREAPER, 1) < 0 || (command = fork ()) < 0)
    {
      err = errno;
      while (write (report, &err, sizeof err) < 0 && errno == EINTR)
        ;
      _exit (126);
    }
  if (command == 0)
    {
      /* The command: as it was, and dying with its watcher. */
      close (sfd);
      close (gate);
      if (sigismember (&start_ignored, SIGCHLD))
        {
          struct sigaction ign = { 0 };

          ign.sa_handler = SIG_IGN;
          sigaction (SIGCHLD, &ign, NULL);
        }
      pthread_sigmask (SIG_SETMASK, &start_mask, NULL);
      if (prctl (PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid () != watcher)
        _exit (125);
      return;
    }
  close (report);
  for (;;)
    {
      struct pollfd fds[2] = { { sfd, POLLIN, 0 }, { gate, POLLIN, 0 } };
      struct signalfd_siginfo info;

      if (poll (fds, 2, -1) < 0)
        continue;
      if (fds[1].revents != 0)
        watcher_end_all (command);   /* never data: the wrapper is gone */
      if (!(fds[0].revents & POLLIN) || read (sfd, &info, sizeof info) != sizeof info)
        continue;
      if (info.ssi_signo == SIGCHLD)
        {
          int wstatus;
          pid_t pid;

          /* Orphans that came back to us are reaped too. */
          while ((pid = waitpid (-1, &wstatus, WNOHANG)) > 0)
            if (pid == command)
              watcher_exit_like (wstatus);
        }
      else if (info.ssi_code != SI_KERNEL)
        kill (command, (int) info.ssi_signo);
    }
}

/* Reads exactly @size bytes from @fd; async-signal-safe. */
static gboolean
gated_read_all (int fd, void *buffer, size_t size)
{
  char *p = buffer;

  while (size > 0)
    {
      ssize_t n = read (fd, p, size);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return FALSE;
      p += n;
      size -= (size_t) n;
    }
  return TRUE;
}

/* After the go, the gate brings the command's environment, known only
 * once the locks are held: its size (a guint32), then its "NAME=VALUE"
 * strings, each ending in a NUL. Read into memory of its own (mmap, not
 * malloc: async-signal-safe). NULL when the wrapper is gone. */
static char **
gated_read_environment (int gate)
{
  guint32 size;
  size_t count = 0;
  char *text, **envp;

  if (!gated_read_all (gate, &size, sizeof size) || size == 0 || size > 64 * 1024 * 1024)
    return NULL;
  text = mmap (NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (text == MAP_FAILED || !gated_read_all (gate, text, size) || text[size - 1] != '\0')
    return NULL;
  for (guint32 i = 0; i < size; i++)
    if (text[i] == '\0')
      count++;
  envp = mmap (NULL, (count + 1) * sizeof (char *), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (envp == MAP_FAILED)
    return NULL;
  count = 0;
  for (guint32 i = 0; i < size; i += (guint32) strlen (text + i) + 1)
    envp[count++] = text + i;
  envp[count] = NULL;
  return envp;
}

/* Runs in the child between fork and exec: async-signal-safe calls only. */
G_GNUC_NORETURN static void
gated_child (int gate, int report, int keep_fd, char **candidates, char **argv, char **sh_argv,
             const SignalsToRestore *restore)
{
  struct sigaction dfl = { 0 }, ign = { 0 };
  gboolean denied = FALSE;
  int err = ENOENT;
  char **envp;
  char go;
  ssize_t n;

  dfl.sa_handler = SIG_DFL;
  ign.sa_handler = SIG_IGN;
  for (int i = 0; i < restore->count; i++)
    sigaction (restore->signals[i], sigismember (&start_ignored, restore->signals[i]) ? &ign : &dfl, NULL);
  pthread_sigmask (SIG_SETMASK, &start_mask, NULL);

  /* The gate opens once the lock files name this process; end-of-file
   * means the wrapper is gone or gave up: never run without a holding. */
  do
    n = read (gate, &go, 1);
  while (n < 0 && errno == EINTR);
  if (n != 1 || go != 'g' || (envp = gated_read_environment (gate)) == NULL)
    _exit (125);
  /* On a lease pool the command, and all it starts, die with the
   * wrapper, which renews the lease: this process stays to see to it. */
  if (gate_die_with_wrapper)
    gated_watch (gate, report);
  else
    close (gate);
  /* The command keeps the job lock for its whole life. */
  if (keep_fd >= 0)
    fcntl (keep_fd, F_SETFD, 0);
  if (start_nofile_raised)
    setrlimit (RLIMIT_NOFILE, &start_nofile);

  for (guint i = 0; candidates[i] != NULL; i++)
    {
      execve (candidates[i], argv, envp);
      err = errno;
      if (err == ENOEXEC)
        {
          /* A script without "#!": the shell runs it, as execvp does. */
          sh_argv[1] = candidates[i];
          execve ("/bin/sh", sh_argv, envp);
          err = errno;
        }
      if (err == EACCES)
        denied = TRUE;
      else if (err != ENOENT && err != ENOTDIR && err != ESTALE && err != ENODEV && err != ETIMEDOUT)
        break;
    }
  if (denied && (err == ENOENT || err == ENOTDIR || err == ESTALE || err == ENODEV || err == ETIMEDOUT))
    err = EACCES;
  while (write (report, &err, sizeof err) < 0 && errno == EINTR)
    ;
  _exit (err == ENOENT || err == ENOTDIR ? 127 : 126);
}

/* Forks the command, which waits behind its gate (see gated_open) until
 * its locks are held: it is forked before they are taken, so that the
 * lock files name it from their first version. Where to look for it is
 * worked out here, as posix_spawnp does, with the PATH of this process
 * (the locks' environment does not set PATH), so that the child only
 * calls execve(). Descriptors without close-on-exec pass to the command;
 * Tessera's own have it, but for @keep_fd. */
gboolean
gated_spawn (char **command, int keep_fd, Gated *gated, GError **error)
{
  g_autoptr(GPtrArray) candidates = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) sh_argv = g_ptr_array_new ();
  int gate[2] = { -1, -1 }, report[2] = { -1, -1 };
  SignalsToRestore restore;
  sigset_t all, saved;
  int fork_errno;
  GPid pid;

  if (strchr (command[0], '/') != NULL)
    g_ptr_array_add (candidates, g_strdup (command[0]));
  else
    {
      const char *path = g_getenv ("PATH");
      g_auto(GStrv) dirs = g_strsplit (path != NULL ? path : "/bin:/usr/bin", ":", -1);

      for (guint i = 0; dirs[i] != NULL; i++)
        g_ptr_array_add (candidates, g_build_filename (*dirs[i] ? dirs[i] : ".", command[0], NULL));
    }
  g_ptr_array_add (candidates, NULL);
  g_ptr_array_add (sh_argv, (gpointer) "/bin/sh");
  for (guint i = 0; command[i] != NULL; i++)
    g_ptr_array_add (sh_argv, command[i]);
  g_ptr_array_add (sh_argv, NULL);

  /* Not g_unix_open_pipe(): its error does not say which errno (out of
   * descriptors is exit 71). */
  if (pipe2 (gate, O_CLOEXEC) < 0 || pipe2 (report, O_CLOEXEC) < 0)
    {
      int pipe_errno = errno;

      if (gate[0] >= 0)
        {
          close (gate[0]);
          close (gate[1]);
        }
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (pipe_errno), _("Cannot start a process: %s"),
                   g_strerror (pipe_errno));
      return FALSE;
    }
  signals_to_restore (&restore);
  /* No handler of this process may run in the child before it resets them. */
  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, &saved);
  pid = fork ();
  fork_errno = errno;
  if (pid == 0)
    {
      close (gate[1]);
      close (report[0]);
      gated_child (gate[0], report[1], keep_fd, (char **) candidates->pdata, command, (char **) sh_argv->pdata,
                   &restore);
    }
  pthread_sigmask (SIG_SETMASK, &saved, NULL);
  close (gate[0]);
  close (report[1]);
  if (pid < 0)
    {
      close (gate[1]);
      close (report[0]);
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (fork_errno),
                   _("Cannot start a process: %s"), g_strerror (fork_errno));
      return FALSE;
    }
  gated->pid = pid;
  gated->gate = gate[1];
  gated->report = report[0];
  return TRUE;
}

void
gated_close (Gated *gated)
{
  if (gated->gate >= 0)
    close (gated->gate);
  gated->gate = -1;
}

/* Opens the gate, handing the command @env (@go), or closes it for good;
 * then returns 0 when the command runs, or the errno of its failed exec. */
int
gated_open (Gated *gated, gboolean go, char **env)
{
  int err = 0;
  ssize_t n;

  if (go)
    {
      g_autoptr(GByteArray) message = g_byte_array_new ();
      guint32 size = 0;
      gsize done = 0;

      g_byte_array_append (message, (const guint8 *) "g", 1);
      g_byte_array_append (message, (const guint8 *) &size, sizeof size);
      for (guint i = 0; env[i] != NULL; i++)
        g_byte_array_append (message, (const guint8 *) env[i], strlen (env[i]) + 1);
      size = message->len - 1 - sizeof size;
      memcpy (message->data + 1, &size, sizeof size);
      while (done < message->len)
        {
          ssize_t w = write (gated->gate, message->data + done, message->len - done);

          if (w < 0 && errno == EINTR)
            continue;
          /* EPIPE: a signal passed on has already ended the command. */
          if (w < 0 && errno != EPIPE)
            g_printerr (_("tessera: %s\n"), g_strerror (errno));
          if (w < 0)
            break;
          done += (gsize) w;
        }
    }
  /* A watcher (lease pool) takes the gate's end for our death: it stays
   * open until the watcher is reaped (gated_close). */
  if (!go || !gate_die_with_wrapper)
    gated_close (gated);
  do
    n = read (gated->report, &err, sizeof err);
  while (n < 0 && errno == EINTR);
  close (gated->report);
  gated->report = -1;
  return n == sizeof err ? err : 0;
}

int
gated_wait (GPid pid)
{
  int wstatus = 0;

  while (waitpid (pid, &wstatus, 0) < 0 && errno == EINTR)
    ;
  return wstatus;
}

int
exit_status_of (int wstatus)
{
  if (WIFSIGNALED (wstatus))
    return 128 + WTERMSIG (wstatus);
  return WEXITSTATUS (wstatus);
}

/* The run's signals: caught on a thread of their own, they end the run
 * while it opens its resources, cancel its wait, and are forwarded to
 * the command once it runs. */

/* How long opening the resources may wait in a lock a peer keeps, past
 * the run's timeout: as long as a wait for ipc.lock may (a peer's
 * critical section is short). */
#define OPEN_GRACE_US G_USEC_PER_SEC

/* Sends @signum to the command's watcher while it runs (the fence's way
 * to end the command where it cannot list its descendants). */
void
signal_command (int signum, gpointer data)
{
  RunState *state = data;

  g_mutex_lock (&state->lock);
  if (state->child != 0)
    kill (state->child, signum);
  g_mutex_unlock (&state->lock);
}

static gboolean
forward_signal (gpointer data, int signum)
{
  RunState *state = data;

  g_mutex_lock (&state->lock);
  if (state->child == 0)
    {
      g_atomic_int_set (&state->pending_signal, signum);
      g_cancellable_cancel (state->cancel);
    }
  /* Ctrl-C on a shared terminal already reached the child. */
  else if (!(signum == SIGINT && state->share_terminal))
    kill (state->child, signum);
  g_mutex_unlock (&state->lock);
  return G_SOURCE_CONTINUE;
}

/* Whether Ctrl-C on our controlling terminal reaches the command by itself:
 * we are in the terminal's foreground process group, which the command
 * shares. Judged from the controlling terminal, not from stdin, which may
 * be a file or /dev/null while the terminal still sends SIGINT. */
gboolean
in_terminal_foreground (void)
{
  int fd = open ("/dev/tty", O_RDONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
  gboolean foreground;

  if (fd < 0)
    return FALSE;
  foreground = tcgetpgrp (fd) == getpgrp ();
  close (fd);
  return foreground;
}

/* The signals a run catches: SIGINT, SIGTERM and SIGHUP, unless ignored at
 * start (nohup): those stay ignored, here and in the command. */
static sigset_t run_signals;

/* They are blocked in every thread (before any exists) and taken here
 * with sigtimedwait(): no handler interrupts whatever a thread is doing,
 * and none can defer them (sanitizers delay handlers to safe points). */
/* How often a run looks at its main thread while it opens its resources
 * or settles (see RunState). */
#define OPEN_SAMPLE_US (G_USEC_PER_SEC / 10)

/* While the resources open or the run settles (see RunState): what the
 * main thread waits for, when it waits for a lock a peer keeps, to be said. */
static char *
main_thread_lock_wait (void)
{
  gboolean unknown;
  char *words = tessera_lock_wait_describe (getpid (), &unknown);

  /* Cannot be told (no /proc): take the deadline as it comes. */
  return words == NULL && unknown ? g_strdup (_("its folder stays locked by another process")) : words;
}

/* What the signal thread watches the main thread for: nothing (a
 * command runs, or no resource is open yet), the opening, or the
 * settling (see RunState). Under the state's lock. */
typedef enum
{
  WATCH_NONE,
  WATCH_OPENING,
  WATCH_SETTLING,
} WatchPhase;

static WatchPhase
watch_phase (RunState *state)
{
  if (state->opening != NULL)
    return WATCH_OPENING;
  if (state->settling && (state->child == 0 || !state->gate_open))
    return WATCH_SETTLING;
  return WATCH_NONE;
}

static gpointer
signal_thread (gpointer data)
{
  RunState *state = data;
  g_autofree char *waiting = NULL;   /* what the main thread was last seen waiting for */
  gint64 waiting_since = 0, sampled = 0;
  gboolean noted = FALSE;
  WatchPhase last_phase = WATCH_NONE;
  int settle_signal = 0;             /* a signal that came while settling */

  for (;;)
    {
      WatchPhase phase;
      struct timespec ts;
      int signum, saved;
      gint64 now;

      g_mutex_lock (&state->lock);
      phase = watch_phase (state);
      g_mutex_unlock (&state->lock);
      /* While opening or settling, look at the main thread ten times a
       * second; otherwise once a second, for the next phase (the main
       * thread does not wake us). */
      ts.tv_sec = phase != WATCH_NONE ? 0 : 1;
      ts.tv_nsec = phase != WATCH_NONE ? OPEN_SAMPLE_US * 1000 : 0;
      signum = sigtimedwait (&run_signals, NULL, &ts);
      saved = errno;

      g_mutex_lock (&state->lock);
      phase = watch_phase (state);
      /* Still opening: nothing is held, end here. */
      if (phase == WATCH_OPENING && signum > 0)
        {
          end_deferred_log ();
          _exit (128 + signum);
        }
      /* Each phase waits, and is told of, on its own. */
      if (phase != last_phase)
        {
          g_clear_pointer (&waiting, g_free);
          noted = FALSE;
          settle_signal = 0;
          last_phase = phase;
        }
      if (phase == WATCH_SETTLING && signum > 0)
        settle_signal = signum;
      now = g_get_monotonic_time ();
      /* Looked at on each tick, and afresh when a signal comes: the
       * last tick's look may be a tenth of a second old. */
      if (phase != WATCH_NONE && (signum > 0 || saved == EAGAIN))
        {
          g_autofree char *words = main_thread_lock_wait ();

          /* Two samples far apart (the run was stopped, or starved):
           * what came between is unknown, so the wait starts again. */
          if (words == NULL || g_strcmp0 (words, waiting) != 0 || now - sampled > 5 * OPEN_SAMPLE_US)
            waiting_since = now;
          sampled = now;
          g_free (waiting);
          waiting = g_steal_pointer (&words);
          /* A peer kept the lock a whole grace, past the deadline. */
          if (waiting != NULL && phase == WATCH_OPENING && state->open_deadline >= 0 &&
              now >= state->open_deadline && now - waiting_since >= OPEN_GRACE_US)
            {
              fail (0, state->no_wait ? _("%s is not available: %s") : _("timed out waiting for %s: %s"),
                    state->opening, waiting);
              _exit (state->conflict_status);
            }
          if (waiting != NULL && !noted && now - waiting_since >= TESSERA_LOCK_NOTE_US)
            {
              tessera_lock_wait_say (waiting);
              noted = TRUE;
            }
        }
      /* Settling behind a peer's lock for a grace, told to end: the
       * command is gone or never ran, so ending here leaves only a dead
       * holder's lock files. A shorter wait (a peer's critical section)
       * ends as usual. */
      if (phase == WATCH_SETTLING && settle_signal != 0 && waiting != NULL &&
          now - waiting_since >= OPEN_GRACE_US)
        {
          fail (0, _("interrupted while %s; what this run held is taken back as a dead holder's"), waiting);
          _exit (128 + settle_signal);
        }
      g_mutex_unlock (&state->lock);
      if (signum > 0)
        forward_signal (state, signum);
    }
  return NULL;
}

/* Before any thread exists, so that all of them block the signals. */
void
start_signal_thread (RunState *state)
{
  const int caught[] = { SIGINT, SIGTERM, SIGHUP };

  sigemptyset (&run_signals);
  for (guint i = 0; i < G_N_ELEMENTS (caught); i++)
    if (!sigismember (&start_ignored, caught[i]))
      sigaddset (&run_signals, caught[i]);
  pthread_sigmask (SIG_BLOCK, &run_signals, NULL);
  g_thread_unref (g_thread_new ("tessera-signals", signal_thread, state));
}

void
child_exited (GPid pid, int wait_status, gpointer data)
{
  RunState *state = data;

  g_mutex_lock (&state->lock);
  state->child = 0;
  g_mutex_unlock (&state->lock);
  state->wait_status = wait_status;
  g_main_loop_quit (state->loop);
}

/* The command's death at its gate (see GateGuard). */

static gpointer
gate_guard_thread (gpointer data)
{
  GateGuard *guard = data;
  struct pollfd fds[2] = { { guard->report, POLLIN, 0 }, { guard->stop[0], POLLIN, 0 } };

  while (poll (fds, 2, -1) < 0 && errno == EINTR)
    ;
  if (fds[1].revents == 0 && fds[0].revents != 0)
    {
      g_atomic_int_set (&guard->state->command_gone, TRUE);
      g_cancellable_cancel (guard->state->cancel);
    }
  return NULL;
}

void
gate_guard_start (GateGuard *guard, RunState *state, int report)
{
  guard->state = state;
  guard->report = report;
  if (!g_unix_open_pipe (guard->stop, FD_CLOEXEC, NULL))
    return;   /* unguarded: the death is then seen once the locks are held */
  guard->thread = g_thread_new ("tessera-gate", gate_guard_thread, guard);
}

void
gate_guard_stop (GateGuard *guard)
{
  if (guard->thread == NULL)
    return;
  while (write (guard->stop[1], "", 1) < 0 && errno == EINTR)
    ;
  g_thread_join (guard->thread);
  guard->thread = NULL;
  close (guard->stop[0]);
  close (guard->stop[1]);
}
