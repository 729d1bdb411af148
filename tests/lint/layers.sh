#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# layers.sh - the source tree's dependency rule (docs/DESIGN.md, "Source
# tree"): a library file includes headers of its own folder and of the
# folders below it only, so that no two folders call each other:
#
#   core <- platform <- ring <- session <- producer <- ctf <- kernel <- relay <- consumer
#   reader: core only          profile (the sampler library): itself only, and
#   platform/maps.h (the async-signal-safe maps reader it compiles in, shared with
#   libtracebuf's crash handler)
#
# tools/, tests/ and bench/ sit above the library.  tools/ is held to the
# public headers plus the private headers listed in TOOLS_MAY_USE below,
# each with the reason it is not public API yet: a new private include in
# tools/ fails here until it is either made public or added to that list.
# Also checked: no library file longer than 600 lines without a
# "Length:" line near its top saying why.
# Exit 1 with every violation listed.
set -uo pipefail
cd "$(dirname "$0")/../.."
rank() {
  case $1 in
    core) echo 0 ;; platform) echo 1 ;; ring) echo 2 ;; session) echo 3 ;;
    producer) echo 4 ;; ctf) echo 5 ;; kernel) echo 6 ;; relay) echo 7 ;; consumer) echo 8 ;; *) echo -1 ;;
  esac
}
# tools/ -> private header: why it is not (yet) public API
TOOLS_MAY_USE='
consumer/engine.h       record drives the recorder engine (tb_engine_*), whose options are not public API yet
kernel/kernel.h         record --kernel fills the kernel recorder'"'"'s options (struct tb_kernel_cfg) and prints its figures
consumer/flight.h       record --snapshot-dir drives the flight recorder (tb_flight_*), whose options are not public API yet
relay/relay.h        record --relay names the relay URL grammar and its errors
core/labels.h           list checks the enum labels a program declares with the same parser as the producer
reader/decimal.h        dump prints doubles with the reader'"'"'s shortest round-trip digits
profile/profile_events.h the profiler'"'"'s event layouts, shared with libtracebuf-profile.so
producer/attach.h       record --pid writes the attach request into a running program: a private protocol between the recorder and the library of its version
core/format.h           the session'"'"'s timing bounds checked with record'"'"'s arguments (exit 2, not 1 at creation), the ids of the kernel'"'"'s classes (report), the trigger slots (record)
core/view.h             record reads the map'"'"'s trigger area to say the tb_trigger() calls a recording that is not a flight recorder ignored
'
bad=0
say() { echo "layers: $*"; bad=1; }
for f in $(git ls-files --cached --others --exclude-standard 'src/*.c' 'src/*.h' 2>/dev/null || find src -name '*.[ch]'); do
  dir=$(echo "$f" | cut -d/ -f2)
  while IFS= read -r inc; do
    to=${inc%%/*}
    [ "$to" = "$inc" ] && { say "$f includes \"$inc\": name private headers by folder (\"$dir/...\")"; continue; }
    [ "$to" = "$dir" ] && continue
    case $dir in
      reader) [ "$to" = core ] || say "$f includes \"$inc\": reader/ stands alone on core/" ;;
      profile) [ "$inc" = platform/maps.h ] ||
        say "$f includes \"$inc\": the sampler library uses only itself and the public headers" ;;
      *)
        rf=$(rank "$dir"); rt=$(rank "$to")
        if [ "$rt" -lt 0 ] || [ "$rt" -ge "$rf" ]; then
          say "$f ($dir) includes \"$inc\" ($to): a folder may use only the folders below it"
        fi ;;
    esac
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
  n=$(wc -l < "$f")
  if [ "$n" -gt 600 ] && ! head -40 "$f" | grep -q 'Length:'; then
    say "$f has $n lines: split it, or say why not in a \"Length:\" line at its top"
  fi
done
for f in $(git ls-files --cached --others --exclude-standard 'tools/*.c' 'tools/*.h' 2>/dev/null || find tools -name '*.[ch]'); do
  while IFS= read -r inc; do
    case $inc in */*) ;; *) continue ;; esac          # tools' own headers
    echo "$TOOLS_MAY_USE" | grep -q "^$inc " ||
      say "$f includes private \"$inc\": use the public API (include/tracebuf/), or list it in $0 with the reason"
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
done
[ $bad = 0 ] && echo "layers: every include goes down the layers"
exit $bad
