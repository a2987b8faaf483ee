#include "plugins/child_process.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>

namespace fugue {

ChildOutcome run_in_child(const std::function<void(const std::function<void(const std::string&)>& say)>& work,
                          std::chrono::milliseconds timeout) {
  ChildOutcome outcome;
  int fds[2];
  if (pipe(fds) != 0) {
    outcome.failure = std::string("could not create a pipe: ") + std::strerror(errno);
    return outcome;
  }
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    outcome.failure = std::string("could not fork: ") + std::strerror(errno);
    close(fds[0]);
    close(fds[1]);
    return outcome;
  }
  if (pid == 0) {
    close(fds[0]);
    auto say = [&](const std::string& line) {
      std::string text = line + "\n";
      for (size_t done = 0; done < text.size();) {
        ssize_t n = write(fds[1], text.data() + done, text.size() - done);
        if (n <= 0) _exit(3);
        done += static_cast<size_t>(n);
      }
    };
    // Nothing may unwind out of here into the parent's code: the child ends in this block.
    try {
      work(say);
    } catch (const std::exception& e) {
      say(std::string("uncaught ") + e.what());
      _exit(4);
    } catch (...) {
      _exit(4);
    }
    close(fds[1]);
    _exit(0);  // no atexit handlers or static destructors of the parent's state
  }
  close(fds[1]);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buffer[4096];
  bool timed_out = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    int ready = poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      timed_out = true;  // poll failed or time is up: the child is stopped, never waited for unbounded
      break;
    }
    ssize_t n = read(fds[0], buffer, sizeof buffer);
    if (n <= 0) break;  // the child closed its end
    outcome.output.append(buffer, static_cast<size_t>(n));
  }
  close(fds[0]);
  // A child that closed its end may still be running: it gets until the deadline to exit too.
  int status = 0;
  while (!timed_out) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR)) break;
    if (std::chrono::steady_clock::now() >= deadline) timed_out = true;
    else usleep(2000);
  }
  if (timed_out) {
    kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (timed_out) {
    outcome.timed_out = true;
    outcome.failure = "did not finish within " + duration_text(timeout) + " (a hang?)";
  } else if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    outcome.signal = sig;
    outcome.failure = "killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")" +
                      (sig == SIGABRT ? ": an uncaught exception or abort()" : "");
  } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    outcome.failure = "exited with status " + std::to_string(WEXITSTATUS(status));
  } else {
    outcome.completed = true;
  }
  return outcome;
}

std::string duration_text(std::chrono::milliseconds duration) {
  const auto ms = duration.count();
  if (ms < 1000) return std::to_string(ms) + " ms";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + " s";
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", static_cast<double>(ms) / 1000);
  return text;
}

}  // namespace fugue
