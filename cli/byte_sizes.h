// Sizes on the command line: a capacity as a number of nodes or a size with
// a unit (--capacity, curve's --capacities), and a capacity's bytes for the
// output (capacity_bytes).
#ifndef KVPREFIX_CLI_BYTE_SIZES_H_
#define KVPREFIX_CLI_BYTE_SIZES_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace kvprefix::cli {

// Byte counts of one node (at most 2^111) and of sizes before they are
// checked against 2^64; a node's bytes times a number of nodes can pass
// 2^128, so CapacityBytes checks that product instead of computing it.
// __extension__ keeps -Wpedantic quiet about the GCC/Clang type.
__extension__ using UInt128 = unsigned __int128;

// The number of bytes `text` names: a decimal (ParseDecimal in
// option_checks.h: 0.5, .5, 80, no leading zero, sign or exponent) followed
// by a unit B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB
// (powers of 1024), rounded down to whole bytes; or nullopt if `text` has no
// unit. Throws std::invalid_argument naming `option` and the problem for
// anything else, or a size of 2^64 bytes or more. Exact for any number of
// digits: no floating point. O(digits).
std::optional<std::uint64_t> ParseByteSize(std::string_view text,
                                           std::string_view option);

// A capacity in nodes from `text`, as typed for option `option`: a number
// of nodes written as every integer option takes it (ParseDecimalInteger:
// no leading zero, -0 is 0), or a size (ParseByteSize) holding floor(size /
// node_bytes) nodes. node_bytes is 0 when --kv-bytes-per-token was not
// given. Throws std::invalid_argument naming the option and the problem,
// for "" too. O(digits).
std::uint64_t ParseCapacity(std::string_view text, std::string_view option,
                            UInt128 node_bytes);

// The KV-cache bytes of `capacity` nodes of `node_bytes` bytes each, or
// nullopt if node_bytes is 0 (no --kv-bytes-per-token) or the product is
// 2^64 or more. The product is checked, not computed: 2^64 nodes of up to
// 2^111 bytes (2^40 per token x 2^20 tokens per block x 2^31 per page) pass
// 2^128. O(1).
std::optional<std::uint64_t> CapacityBytes(std::uint64_t capacity,
                                           UInt128 node_bytes);

}  // namespace kvprefix::cli

#endif  // KVPREFIX_CLI_BYTE_SIZES_H_
