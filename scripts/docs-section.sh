# Sourced by the scripts that write a generated section into a page of the manual
# (docs-notify-previews, docs-forecast-example).
#
# docs_section NAME PAGE OUT GENERATOR: runs GENERATOR (a binary of the build) and writes PAGE
# to OUT with the lines between its markers "<!-- NAME: begin ..." and "<!-- NAME: end -->"
# replaced by a blank line and what GENERATOR printed. Exits when a marker is missing or the
# generator fails; NAME names the script in its messages.
docs_section() {
  local name=$1 page=$2 out=$3 generator=$4
  local begin="<!-- $name: begin" end="<!-- $name: end -->" section
  [ -x "$generator" ] || {
    echo "docs-$name: no $generator; build it first (cmake --build <build> --target" \
      "$(basename "$generator"))" >&2
    exit 1
  }
  grep -q "^$begin" "$page" && grep -qx "$end" "$page" || {
    echo "docs-$name: $page lacks the markers \"$begin ...\" and \"$end\"" >&2
    exit 1
  }
  section=$(mktemp)
  # shellcheck disable=SC2064  # the file's name now, not at exit
  trap "rm -f '$section' '$section.page'" EXIT
  "$generator" > "$section"
  # The page up to the begin marker, the section, and the page from the end marker on.
  awk -v begin="$begin" -v end="$end" -v section="$section" '
    index($0, begin) == 1 { print; print ""; while ((getline line < section) > 0) print line; skip = 1; next }
    $0 == end { skip = 0 }
    !skip { print }
  ' "$page" > "$section.page"
  mv "$section.page" "$out"
}
