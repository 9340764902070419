/* tessera-floor.c: the floors bench/run.py measures Tessera against
 * (issue 43): what any program in Tessera's place must at least spend.
 * Linked against the libraries `tessera` is (libtessera, GIO, json-glib,
 * GModule), so that starting it costs what loading them costs.
 *
 *   tessera-floor exec COMMAND [ARG...]
 *       fork, exec COMMAND, wait for it and exit with its status: the
 *       floor of `tessera run … -- COMMAND`.
 *   tessera-floor none
 *       exit at once: the floor of a run that starts no command
 *       (`tessera run --no-wait` on a busy resource).
 *   tessera-floor scan FOLDER
 *       read FOLDER's names and lstat() each: print "us=" the µs it took
 *       in this process (its start-up not included) and "files=".
 *   tessera-floor read FOLDER
 *       read FOLDER's names and open and read each regular file once:
 *       "us=" and "files=" as scan.
 *   tessera-floor flock FOLDER SECONDS LOG
 *       16 of these against bench's "throughput" mode: a capacity of 4
 *       shared through raw flock(2) alone, a count in FOLDER/count read and
 *       written under flock(2) of that file (a full count is tried again
 *       after a pause); count the takes for SECONDS and log "count
 *       context-switches cpu-µs" as throughput does.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <tessera/tessera.h>

#include <gio/gunixfdlist.h>
#include <gmodule.h>
#include <json-glib/json-glib.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* One call into each library, never made: the linker keeps each (as
 * `tessera` needs each), the loader maps and relocates each. */
static void
keep_libraries (void)
{
  g_autoptr(GFile) file = g_file_new_for_path ("/");
  g_autoptr(GUnixFDList) fds = g_unix_fd_list_new ();
  g_autoptr(JsonParser) parser = json_parser_new ();

  if (g_module_supported ())
    tessera_registry_get_default ();
}

static int
mode_exec (char **argv)
{
  pid_t pid = fork ();
  int status;

  if (pid < 0)
    return 71;
  if (pid == 0)
    {
      execvp (argv[0], argv);
      _exit (127);
    }
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      return 71;
  return WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
}

static int
mode_folder (const char *folder, gboolean read_each)
{
  gint64 start = g_get_monotonic_time ();
  DIR *dir = opendir (folder);
  struct dirent *entry;
  long files = 0;
  char buffer[65536];

  if (dir == NULL)
    return 1;
  while ((entry = readdir (dir)) != NULL)
    {
      struct stat st;
      int fd;

      if (entry->d_name[0] == '.')
        continue;
      if (!read_each)
        {
          if (fstatat (dirfd (dir), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
            files++;
          continue;
        }
      fd = openat (dirfd (dir), entry->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0)
        continue;
      while (read (fd, buffer, sizeof buffer) > 0)
        ;
      close (fd);
      files++;
    }
  closedir (dir);
  printf ("us=%" G_GINT64_FORMAT " files=%ld\n", g_get_monotonic_time () - start, files);
  return 0;
}

/* The count of FOLDER/count, under flock(2) of that file: +1 when below
 * 4 (TRUE), -1 (@delta -1). */
static gboolean
change_count (int fd, int delta)
{
  char text[32] = "";
  long count;
  gboolean done = FALSE;
  ssize_t n;

  if (flock (fd, LOCK_EX) < 0)
    exit (1);
  n = pread (fd, text, sizeof text - 1, 0);
  count = n > 0 ? strtol (text, NULL, 10) : 0;
  if (delta < 0 || count < 4)
    {
      n = g_snprintf (text, sizeof text, "%-20ld\n", count + delta);
      if (pwrite (fd, text, (size_t) n, 0) != n)
        exit (1);
      done = TRUE;
    }
  flock (fd, LOCK_UN);
  return done;
}

static int
mode_flock (const char *folder, double seconds, const char *log)
{
  gint64 end = g_get_monotonic_time () + (gint64) (seconds * G_USEC_PER_SEC);
  g_autofree char *path = g_build_filename (folder, "count", NULL);
  long count = 0;
  struct rusage usage;
  char line[128];
  int fd, n;

  g_mkdir_with_parents (folder, 0777);
  fd = open (path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0)
    return 1;
  while (g_get_monotonic_time () < end)
    {
      /* Full: a quarter of a millisecond doubling to one, as Tessera's
       * refused waiter pauses while the lock was busy less than a second. */
      for (gulong pause = 250; !change_count (fd, +1); pause = MIN (pause * 2, 1000))
        g_usleep (pause);
      count++;
      change_count (fd, -1);
    }
  close (fd);
  getrusage (RUSAGE_SELF, &usage);
  n = g_snprintf (line, sizeof line, "%ld %ld %ld\n", count, usage.ru_nvcsw + usage.ru_nivcsw,
                  (long) (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000000L +
                  (long) (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec));
  fd = open (log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0 || write (fd, line, n) != n)
    return 3;
  close (fd);
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc < 0)
    keep_libraries ();
  if (argc >= 3 && strcmp (argv[1], "exec") == 0)
    return mode_exec (argv + 2);
  if (argc == 2 && strcmp (argv[1], "none") == 0)
    return 0;
  if (argc == 3 && (strcmp (argv[1], "scan") == 0 || strcmp (argv[1], "read") == 0))
    return mode_folder (argv[2], strcmp (argv[1], "read") == 0);
  if (argc == 5 && strcmp (argv[1], "flock") == 0)
    return mode_flock (argv[2], g_ascii_strtod (argv[3], NULL), argv[4]);
  fprintf (stderr, "usage: see the comment at the top of tessera-floor.c\n");
  return 2;
}
