#!/usr/bin/env bash
# Re-records the `c` family of the corpus: gcc and clang diagnostics, linker
# errors through make, a segfault, AddressSanitizer, UndefinedBehaviorSanitizer
# and valgrind memcheck reports, a passing build and run, on the projects
# testdata/projects/c-*.
#
# Needs (Debian packages): gcc (12), clang (14), make, valgrind, jq.
#   apt-get install -y gcc clang make valgrind jq
#
# Run:   bash internal/eval/corpus/record/c.sh
# Keep the default CTXC_CORPUS_WORKDIR (/tmp/ctxc-corpus): the outputs name
# files under it, and the labels quote those lines.
source "$(dirname "$0")/lib.sh"

# gcc quotes identifiers with ‘ ’ in a UTF-8 locale, as in an agent's terminal.
export LC_ALL=C.UTF-8

# refresh_volatile FAMILY CASE: a label that is no longer a line of the new
# output because only a process id, a thread id, an address or a duration in
# it changed is replaced by the first line of the new output that differs
# from it in those numbers alone (labels stay as written otherwise).
refresh_volatile() {
  local json="$CORPUS_DIR/recorded/$1/$2.json" out="$CORPUS_DIR/recorded/$1/$2.out"
  jq --rawfile out "$out" '
    def norm: gsub("0x[0-9a-fA-F]+"; "0x_") | gsub("==[0-9]+=="; "==_==")
      | gsub("^bash: line (?<l>[0-9]+): +[0-9]+ "; "bash: line \(.l): _ ")
      | gsub("\\) \\([0-9]+\\) panicked"; ") (_) panicked") | gsub("'"'"' \\([0-9]+\\) panicked"; "'"'"' (_) panicked")
      | gsub("[0-9]+\\.[0-9]+s\\b"; "_s");
    ($out | split("\n") | map(gsub("^\\s+|\\s+$"; ""))) as $lines
    | ($lines | map({(.): true}) | add // {}) as $set
    | def fix: if $set[.] then . else (norm as $n | [$lines[] | select(norm == $n)]) as $c
        | if ($c | length) > 0 then $c[0] else . end end;
    reduce ("identifying", "generic", "trouble") as $k (.; if .[$k] then .[$k] |= map(fix) else . end)
  ' "$json" >"$json.tmp" && mv "$json.tmp" "$json"
}

GCC='gcc --version | sed -n 1p'
CLANG='clang --version | sed -n 1p'
F=c

# c-kvstore: a misspelt macro, a call with too few arguments, an int passed
# as a string, an undeclared function, a misspelt struct member, strdup
# hidden by -std=c11: errors, warnings and notes in gcc's and clang's formats.
record $F gcc-compile-errors c-kvstore gcc "$GCC" -- 'gcc -Wall -Wextra -std=c11 -c main.c kvstore.c'
record $F clang-compile-errors c-kvstore clang "$CLANG" -- 'clang -Wall -Wextra -std=c11 -c main.c kvstore.c'
record $F make-compile-error c-kvstore make 'make --version | sed -n 1p' -- 'make'

# c-geo: a declared but never defined function and a missing -lm.
record $F make-link-undefined c-geo make 'make --version | sed -n 1p' -- 'make'
record $F make-clang-link-undefined c-geo make 'make --version | sed -n 1p' -- 'make CC=clang'

# c-csvsum: a field array allocated one pointer short (heap overflow) and a
# NULL field of a short row passed to strtod (segfault).
record $F run-segfault c-csvsum bash 'bash --version | sed -n 1p' -- 'make && ./csvsum data/sales.csv amount > totals.txt && cat totals.txt'
refresh_volatile $F run-segfault
record $F asan-heap-overflow c-csvsum gcc "$GCC" -- 'make csvsum-asan && ./csvsum-asan data/sales.csv amount'
refresh_volatile $F asan-heap-overflow
record $F cat-source c-csvsum cat 'cat --version | sed -n 1p' -- 'cat -n csv.c'
record $F valgrind-memcheck c-csvsum valgrind 'valgrind --version' -- 'make -s && valgrind --leak-check=full ./csvsum data/sales.csv amount'
refresh_volatile $F valgrind-memcheck

# c-matrix: builds and runs; -Wall -Wextra warns; UBSan finds the checksum's
# signed overflow while the program still exits 0.
record $F make-run-pass c-matrix make 'make --version | sed -n 1p' -- 'make && ./matrix'
record $F gcc-warnings-only c-matrix gcc "$GCC" -- 'gcc -Wall -Wextra -O2 -o matrix main.c matrix.c'
record $F clang-ubsan-overflow c-matrix clang "$CLANG" -- 'clang -fsanitize=undefined -g -o matrix-ubsan main.c matrix.c && ./matrix-ubsan'
