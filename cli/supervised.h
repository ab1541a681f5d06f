// A command that runs a user's plugin runs it in a child process
// (verify/isolation.h's RunInChild, the mechanism `verify` checks plugins
// with): the plugin runs in kvprefix's address space, so its crash, its
// exit() or _exit(), or a call that never returns would otherwise end or
// hang the command, with the plugin's signal or status (0 included) and
// whatever output was written. Under supervision each of these ends the
// command with one line naming the plugin, the call and what happened,
// exit status 1, and no output: the child hands its outputs (WriteOutput)
// to the parent, which writes them only once the child has finished.
#ifndef KVPREFIX_CLI_SUPERVISED_H_
#define KVPREFIX_CLI_SUPERVISED_H_

#include <CLI/CLI.hpp>
#include <functional>
#include <span>
#include <string>
#include <string_view>

namespace kvprefix::cli {

// --timeout's default, in seconds: a plugin call (loading, create, insert,
// match, destroy, ...) taking a minute is hung; a cache's call takes
// microseconds, and loading or destroying a large one seconds.
inline constexpr double kDefaultPluginTimeout = 60;

// Adds --timeout SECONDS (0.001 to 1e6; default kDefaultPluginTimeout) to
// `command`: the most any one call of a plugin engine may take.
void AddPluginTimeoutOption(CLI::App& command, double& seconds);

// Runs work(), a command's whole run: here when `engine` (an engine name
// of engines/registry.h) is not a plugin's ("plugin:PATH"); else in a child
// process (RunInChild; call it while the process has one thread), whose
// outputs WriteOutput hands to this process. Then:
// - work() returned: the outputs are written (WriteFileAtomically), in
//   the order given; their IoError is thrown as it is;
// - work() threw: its CommandFailure (CurrentFailure, run.h) is thrown,
//   the outputs dropped;
// - the child crashed, exited or had a plugin call in flight for longer
//   than `timeout_seconds`: CommandFailure(1, DescribeChildEnd's line,
//   e.g. "the plugin crashed: killed by signal 11 (Segmentation fault) in
//   match #2 of plugin 'mycache' (./libmycache.so)"), no output written.
// Costs a fork and the outputs' bytes through a pipe; the plugin's calls
// run at in-process speed (plugin_engine.h's PluginCallBoard).
void RunSupervised(std::string_view engine, double timeout_seconds,
                   const std::function<void()>& work);

// Writes `pieces`, in order, to `path` as WriteFileAtomically does, or,
// inside RunSupervised's child, keeps them for the parent to write. Throws
// as WriteFileAtomically; in the child, std::bad_alloc. Not thread-safe.
void WriteOutput(const std::string& path,
                 std::span<const std::string_view> pieces);
void WriteOutput(const std::string& path, std::string_view contents);

}  // namespace kvprefix::cli

#endif  // KVPREFIX_CLI_SUPERVISED_H_
