#!/usr/bin/env bash
# Builds and runs the libFuzzer targets: each folder Fuzz/NAME with a main.swift (the
# entry point, `LLVMFuzzerTestOneInput`) and a corpus/ of seeds is one target.
#
#   Fuzz/fuzz.sh [SECONDS] [NAME...]     run each target (all by default) for SECONDS (60)
#
# The program's own modules (Platform, Queue, Transport, Engine, Watcher) are compiled once with
# `swiftc -sanitize=fuzzer,address -enable-testing` into .build/fuzz/ (see FUZZ_QUICK), rebuilt when a source
# is newer; each target is linked against them and may `@testable import` any of them.
# New inputs go to .build/fuzz/NAME/found (the committed corpus is only read); a crash
# leaves its input in .build/fuzz/NAME/ and fails the run. Executions per target are
# printed at the end and kept in .build/fuzz/report.txt.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
SECONDS_EACH=${1:-60}
shift || true
# FUZZ_QUICK=1 (`make test`, a few seconds per target): the modules unoptimised, which
# compiles in under half the CPU time, in a folder of their own; `make fuzz` keeps -O.
if [[ ${FUZZ_QUICK:-} == 1 ]]; then
    OUT=$ROOT/.build/fuzz-quick
    OPTIMIZE=(-Onone -gline-tables-only)
else
    OUT=$ROOT/.build/fuzz
    OPTIMIZE=(-O -g)
fi
MODULES=$OUT/modules
SWIFTC=${SWIFTC:-swiftc}
CLANG=${CLANG:-$(dirname "$(command -v "$SWIFTC")")/clang}
SANITIZE=(-sanitize=fuzzer,address)
FLAGS=("${OPTIMIZE[@]}" -parse-as-library -enable-testing -swift-version 6 "${SANITIZE[@]}" -I "$MODULES"
       -I "$ROOT/Sources/CSQLite" -I "$ROOT/Sources/COpenSSL")
LIBS=(-lssl -lcrypto -lsqlite3)
export SWIFT_BACKTRACE=enable=no
# Foundation keeps objects alive on purpose (caches, errors); leaks are not what is hunted here.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
mkdir -p "$MODULES"

# A module is rebuilt when its object is missing or older than any of its sources or of
# a module it imports.
build_module() {
    local name=$1; shift
    local object=$MODULES/$name.o
    local sources
    mapfile -t sources < <(find "$ROOT/Sources/$name" -name '*.swift' | sort)
    if [[ -f $object ]] && [[ -z $(find "$ROOT/Sources/$name" "$@" -newer "$object" -print -quit 2>/dev/null) ]]; then
        return
    fi
    echo "fuzz: compiling $name"
    "$SWIFTC" "${FLAGS[@]}" -module-name "$name" -wmo -emit-module -emit-module-path "$MODULES/$name.swiftmodule" \
        -c -o "$object" "${sources[@]}"
}

# A C target of the package (Sources/NAME/*.c, its header in include/; CSystem's header may be
# included too) as a module and an archive.
build_c() {
    local name=$1
    local object=$MODULES/$name.a
    if [[ -f $object ]] && [[ -z $(find "$ROOT/Sources/$name" -newer "$object" -print -quit) ]]; then return; fi
    echo "fuzz: compiling $name"
    mkdir -p "$MODULES/$name"
    printf 'module %s {\n    umbrella "%s/Sources/%s/include"\n    export *\n}\n' "$name" "$ROOT" "$name" > "$MODULES/$name/module.modulemap"
    local objects=()
    for c in "$ROOT"/Sources/"$name"/*.c; do
        "$CLANG" -O1 -g -fsanitize=fuzzer-no-link,address -I "$ROOT/Sources/$name/include" -I "$ROOT/Sources/CSystem/include" -c "$c" -o "$MODULES/$name/$(basename "$c" .c).o"
        objects+=("$MODULES/$name/$(basename "$c" .c).o")
    done
    rm -f "$object" && ar rcs "$object" "${objects[@]}"
}

build_c CSystem
build_c CCurl
build_c CExif
FLAGS+=(-I "$MODULES/CSystem" -I "$MODULES/CCurl" -I "$MODULES/CExif")
build_module Platform
# Modules that do not import each other are compiled side by side (one core each); the
# run stops if either failed, once both ended.
wait_both() { local failed=0; wait "$1" || failed=1; wait "$2" || failed=1; return $failed; }
build_module Queue "$MODULES/Platform.o" & queue=$!
build_module Transport "$MODULES/Platform.o" "$MODULES/CCurl.a" & transport=$!
wait_both $queue $transport
build_module Engine "$MODULES/Queue.o" "$MODULES/Transport.o" "$MODULES/CSystem.a" & engine=$!
build_module Watcher "$MODULES/Queue.o" "$MODULES/Transport.o" "$MODULES/CSystem.a" "$MODULES/CExif.a" & watcher=$!
wait_both $engine $watcher
# CSystem after the archives that call it (the linker reads each archive once).
OBJECTS=("$MODULES/Platform.o" "$MODULES/Queue.o" "$MODULES/Transport.o" "$MODULES/Engine.o" "$MODULES/Watcher.o"
         "$MODULES/CCurl.a" "$MODULES/CExif.a" "$MODULES/CSystem.a")

if [[ $# -gt 0 ]]; then TARGETS=("$@"); else
    mapfile -t TARGETS < <(find "$ROOT/Fuzz" -mindepth 2 -maxdepth 2 -name main.swift -printf '%h\n' | xargs -n1 basename | sort)
fi

REPORT=$OUT/report.txt
: > "$REPORT"
status=0
for target in "${TARGETS[@]}"; do
    dir=$ROOT/Fuzz/$target
    work=$OUT/$target
    exe=$work/fuzz-$target
    mkdir -p "$work/found"
    if [[ ! -x $exe ]] || [[ -n $(find "$dir" -name '*.swift' -newer "$exe" -print -quit) ]] \
        || [[ -n $(find "${OBJECTS[@]}" -newer "$exe" -print -quit) ]]; then
        echo "fuzz: linking $target"
        # The linker warns about every ASan helper symbol: its output is shown only on failure.
        if ! "$SWIFTC" "${FLAGS[@]}" -module-name "Fuzz_${target//-/_}" "$dir"/*.swift "${OBJECTS[@]}" "${LIBS[@]}" \
                -o "$exe" >"$work/link.log" 2>&1; then
            grep -v "Cannot export local symbol" "$work/link.log" >&2
            exit 1
        fi
    fi
    echo "fuzz: running $target for ${SECONDS_EACH}s"
    log=$work/last-run.log
    if (cd "$work" && "$exe" -max_total_time="$SECONDS_EACH" -detect_leaks=0 -rss_limit_mb=2048 -max_len=65536 \
            -print_final_stats=1 -artifact_prefix="$work/" found "$dir/corpus" >"$log" 2>&1); then
        runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
        echo "$target: $runs executions in ${SECONDS_EACH}s, no crash" | tee -a "$REPORT"
    else
        echo "$target: CRASH (input and log in $work/):" | tee -a "$REPORT"
        grep -E 'ERROR|Fatal error|SUMMARY|Test unit written' "$log" | head -5 | tee -a "$REPORT"
        status=1
    fi
done
exit $status
