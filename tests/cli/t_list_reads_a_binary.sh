# SPDX-License-Identifier: MIT
# t_list_reads_a_binary.sh - `tracebuf list FILE` names the event classes a program or library
# declares, before it runs (the tracebuf_events section every TB_EVENT writes): a class used in
# two translation units is listed once, a class without fields too, --fields shows the fields as
# declared, the section survives --gc-sections, C++ objects declare theirs the same way; a file
# with no TB_EVENT, a truncated ELF file and a damaged section get a clear error, exit non-zero;
# an enum label list the producer would refuse is named with the reason, exit non-zero.
set -u
. "$(dirname "$0")/../lib/recorder_env.sh"
command -v cc > /dev/null || { echo "SKIP: no C compiler"; exit 77; }
INC=${TB_SRC:?}/include
cat > "$T/ev.h" <<'C'
#include <tracebuf/event.h>
TB_EVENT(shop, order, (u32, id), (str, item), (f64, price))
TB_EVENT(shop, idle)
C
cat > "$T/a.c" <<'C'
#include "ev.h"
void other(void);
int main(void) { tb_shop_order(1, "tea", 2.5); other(); return 0; }
C
cat > "$T/b.c" <<'C'
#include "ev.h"
TB_EVENT(shop, refund, (u32, id), (bool, full))
void other(void) { tb_shop_idle(); tb_shop_refund(1, 1); }
C
# a sanitizer build's library needs its runtime in the program too
san=$(sed -n 's/^TB_SANITIZE:STRING=//p' "${TB_BUILD:?}/CMakeCache.txt" 2> /dev/null)
cc -O2 -Wall -Werror ${san:+-fsanitize=$san} -ffunction-sections -fdata-sections -I"$INC" -I"$T" "$T/a.c" "$T/b.c" -o "$T/shop" \
	-Wl,--gc-sections -L"${TB_BUILD:?}" -ltracebuf || fail "building the program"
"$CLI" list "$T/shop" > "$T/l" || fail "list of the program"
printf 'shop:idle\nshop:order\nshop:refund\n' | diff - "$T/l" || fail "list: each class once, sorted"
"$CLI" list --fields "$T/shop" > "$T/lf" || fail "list --fields"
grep -qx 'shop:order  {(u32, id), (str, item), (f64, price)}' "$T/lf" || { cat "$T/lf"; fail "--fields of shop:order"; }
grep -qx 'shop:idle  {}' "$T/lf" || { cat "$T/lf"; fail "--fields of a class without fields"; }

echo "== enum label lists: shown as declared, checked with the producer's parser"
cat > "$T/e.c" <<'C'
#include <tracebuf/event.h>
TB_EVENT(door, move, (enum, to, (OPEN, SHUT = 4)), (u8, n))
TB_EVENT(door, odd, (enum, how, (HALF = 0.5)))
#include <unistd.h>
int main(int argc, char **argv)
{
	tb_door_move(4, 1);
	tb_door_odd(0);
	while (argc > 1 && access(argv[1], F_OK) != 0) /* alive until told, for `list SESSION` */
		usleep(1000);
	return 0;
}
C
cc -O2 -Wall -Werror ${san:+-fsanitize=$san} -I"$INC" "$T/e.c" -o "$T/door" -L"$TB_BUILD" -ltracebuf \
	-Wl,-rpath,"$TB_BUILD" || fail "building the enum program"
"$CLI" list --fields "$T/door" > "$T/el" 2> "$T/ee" && fail "a label list the producer refuses: exit 0"
grep -qx 'door:move  {(enum, to, (OPEN, SHUT = 4)), (u8, n)}' "$T/el" || { cat "$T/el"; fail "--fields of door:move"; }
grep -q 'door:odd field how: .*HALF.*not an int32 integer literal; the program records it as a plain i32' "$T/ee" ||
	{ cat "$T/ee"; fail "the refused label list is named with the reason"; }
# and so it does: the live session lists door:move's labels, door:odd's field as i32
"$CLI" record -q --session "$T/shm/door.tb" -o "$T/dt" -- "$T/door" "$T/go" &
rec=$!
wait_for sh -c "'$CLI' list '$T/shm/door.tb' 2> /dev/null | grep -q door:odd" || fail "door's classes never listed"
"$CLI" list --fields "$T/shm/door.tb" > "$T/sl" || fail "list --fields of the live session"
grep -qx 'door:move  enabled in chan  { to: enum (OPEN=0,SHUT=4), n: u8 }' "$T/sl" || { cat "$T/sl"; fail "session: door:move's labels"; }
grep -qx 'door:odd  enabled in chan  { how: i32 }' "$T/sl" || { cat "$T/sl"; fail "session: door:odd as i32"; }
touch "$T/go"
wait $rec || fail "record of the enum program"
"$CLI" dump "$T/dt" | grep -q 'door:move: { to = SHUT, n = 1 }' || fail "dump: the label of door:move's field"
"$CLI" dump "$T/dt" | grep -q 'door:odd: { how = 0 }' || fail "dump: door:odd's field as a plain number"

if command -v c++ > /dev/null; then
	printf '#include "ev.h"\nint main() { tb_shop_order(2, "cake", 3.0); }\n' > "$T/c.cpp"
	c++ -std=c++17 -O2 -Wall -Werror -I"$INC" -I"$T" -c "$T/c.cpp" -o "$T/c.o" || fail "C++ object"
	"$CLI" list "$T/c.o" | grep -qx 'shop:order' || fail "list of a C++ object file"
fi

echo "== files that do not declare classes, or are damaged"
"$CLI" list /bin/sh > /dev/null 2> "$T/e" && fail "a program without TB_EVENT: exit 0"
grep -q "declares no event classes" "$T/e" || { cat "$T/e"; fail "the message says why"; }
head -c 200 "$T/shop" > "$T/cut"
"$CLI" list "$T/cut" > /dev/null 2> "$T/e" && fail "a truncated ELF file: exit 0"
grep -q "outside the file" "$T/e" || { cat "$T/e"; fail "truncated: the message says what is wrong"; }
# the section's last entry loses its closing brace
python3 - "$T/shop" "$T/bad" <<'PY' || fail "could not damage the section"
import sys
b = bytearray(open(sys.argv[1], "rb").read())
i = b.rfind(b"(bool, full)}")
assert i > 0
b[i + len(b"(bool, full)")] = ord("x")
open(sys.argv[2], "wb").write(b)
PY
"$CLI" list "$T/bad" > /dev/null 2> "$T/e" && fail "a damaged section: exit 0"
grep -q "damaged" "$T/e" || { cat "$T/e"; fail "damaged: the message says so"; }
echo ok
