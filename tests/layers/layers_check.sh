#!/usr/bin/env bash
# .ci/layers on a scratch copy of the tree: it passes on the tree as it is,
# and refuses a planted upward include, a planted include of another
# module's private header, a public header outside a face and an unranked
# module, naming the file, the line and the rule each time.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fails=0 passes=0

fresh() {
  rm -rf "$scratch/tree"; mkdir -p "$scratch/tree/.ci"
  cp -r "$src/src" "$src/include" "$scratch/tree/"
  cp "$src/.ci/layers" "$scratch/tree/.ci/layers"
}
# expect NAME STATUS PATTERN: runs the check, compares exit status and output
expect() {
  local name=$1 want=$2 pattern=$3 got=0 out
  out=$("$scratch/tree/.ci/layers" "$scratch/tree" 2>&1) || got=$?
  if [ "$got" -eq "$want" ] && grep -qE -- "$pattern" <<<"$out"; then
    echo "ok - $name"; passes=$((passes + 1))
  else
    echo "not ok - $name: exit $got (wanted $want), output:"; sed 's/^/    /' <<<"$out"
    fails=$((fails + 1))
  fi
}
plant() { # FILE LINE-TEXT: the text goes in after the file's first include
  awk -v t="$2" '!d && /^#include/ {print; print t; d=1; next} {print}' "$scratch/tree/$1" >"$scratch/x"
  mv "$scratch/x" "$scratch/tree/$1"
}

fresh
expect "the tree as it is keeps the rule" 0 "every include points down"

fresh
plant src/base/buf.c '#include "steward/api/api.h"'
line=$(grep -n 'steward/api/api.h' "$scratch/tree/src/base/buf.c" | cut -d: -f1)
expect "an upward include is refused with file, line and rule" 1 \
  "^src/base/buf.c:$line: base \(rank 0\) may not include api \(rank 6\)"

fresh
plant src/http/router.c '#include "steward/db/db.h"'
expect "an include across one rank (http -> db) is refused" 1 \
  "^src/http/router.c:[0-9]+: http \(rank 2\) may not include db \(rank 2\)"

fresh
plant src/deploy/hub.c '#include "api/api_internal.h"'
expect "another module's private header is refused" 1 \
  "^src/deploy/hub.c:[0-9]+: private header of module api, included from deploy"

fresh
touch "$scratch/tree/include/steward/loose.h"
expect "a public header outside a face is refused" 1 \
  "^include/steward/loose.h: a public header outside a module's face"

fresh
mkdir "$scratch/tree/src/misc"; echo '#include "steward/base/base.h"' >"$scratch/tree/src/misc/x.c"
expect "an unranked module is refused" 1 "^src/misc: unranked module"

fresh
plant src/api/tokens.c '#include "steward/http.h"'
expect "the old flat layout is refused" 1 "^src/api/tokens.c:[0-9]+: public headers live in a module's face"

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
