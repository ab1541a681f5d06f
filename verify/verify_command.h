// The `kvprefix verify` subcommand: checks an implementation of the contract
// (an external program, or the built-in engines) against the reference trie.
#ifndef KVPREFIX_VERIFY_VERIFY_COMMAND_H_
#define KVPREFIX_VERIFY_VERIFY_COMMAND_H_

#include <CLI/CLI.hpp>

namespace kvprefix {

// Adds the `verify` subcommand to `app`; see `kvprefix verify --help`. Its
// callback prints its report on standard output and signals failure by
// throwing, for main to map to SPEC §6 exit statuses: std::invalid_argument
// or InputError for bad usage or input (2), IoError for an unwritable --out
// or unreadable input (1), std::system_error if the command cannot be
// started (1), std::runtime_error ("verify failed: <kind>") when the
// implementation disagrees with the reference (1). Call once, before
// app.parse(). Not thread-safe.
void RegisterVerifyCommand(CLI::App& app);

}  // namespace kvprefix

#endif  // KVPREFIX_VERIFY_VERIFY_COMMAND_H_
