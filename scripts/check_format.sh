#!/usr/bin/env bash
# Checks that every C++ file of the repository is formatted as the checked-in
# .clang-format says, with clang-format 14 pinned (Debian 12's clang-format-14,
# 14.0.6): another version formats some constructs differently. Fix with:
#   git ls-files '*.cc' '*.h' | xargs clang-format-14 -i
#
# Exits 0 when all is formatted, 1 naming the files that are not, and 77
# (ctest's SKIP_RETURN_CODE) with a message when clang-format-14 is absent;
# .ci/run installs it, so CI always checks.
set -euo pipefail
cd "$(dirname "$0")/.."

format=$(command -v clang-format-14 || true)
if [ -z "$format" ]; then
  echo "SKIPPED: clang-format-14 is not installed" \
    "(apt-get install clang-format-14); the format is not checked" >&2
  exit 77
fi

if [ -e .git ]; then
  mapfile -t files < <(git ls-files '*.cc' '*.h')
else
  mapfile -t files < <(find . -path './build*' -prune -o \
    \( -name '*.cc' -o -name '*.h' \) -print | sort)
fi
unformatted=()
for file in "${files[@]}"; do
  "$format" --dry-run --Werror "$file" >/dev/null 2>&1 || unformatted+=("$file")
done
if [ ${#unformatted[@]} -gt 0 ]; then
  echo "not formatted with $($format --version | head -n 1):"
  printf '  %s\n' "${unformatted[@]}"
  echo "fix: $format -i ${unformatted[*]}"
  exit 1
fi
echo "format: OK, ${#files[@]} C++ files as .clang-format says ($($format --version | head -n 1))"
