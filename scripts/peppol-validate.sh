#!/usr/bin/env bash
# Runs the official EN 16931 (CEN/TC 434) and Peppol BIS Billing 3.0 Schematron, compiled to XSLT,
# over UBL files — e.g. what GET /v1/sales/invoices/{id}/ubl answered — with Saxon-HE.
#
#   scripts/peppol-validate.sh ARTEFACTS_DIR file.xml [file.xml …]
#
# ARTEFACTS_DIR holds CEN-EN16931-UBL.xslt and PEPPOL-EN16931-UBL.xslt as OpenPEPPOL releases them
# (not shipped here: they are on GitHub and Maven Central only, see docs/einvoicing.md). Saxon-HE
# comes from Debian (`apt-get install libsaxonhe-java`, with a Java runtime) or SAXON_JAR.
# Prints every failed assertion; exits 1 when any is fatal, 0 when all files pass.
set -euo pipefail
if [ "$#" -lt 2 ]; then
  sed -n '2,10p' "$0" >&2
  exit 2
fi
artefacts=$1
shift
saxon=${SAXON_JAR:-/usr/share/java/Saxon-HE.jar}
for stylesheet in CEN-EN16931-UBL.xslt PEPPOL-EN16931-UBL.xslt; do
  [ -f "$artefacts/$stylesheet" ] || { echo "missing $artefacts/$stylesheet" >&2; exit 2; }
done
[ -f "$saxon" ] || { echo "missing Saxon-HE at $saxon (apt-get install libsaxonhe-java)" >&2; exit 2; }
report=$(mktemp)
trap 'rm -f "$report"' EXIT
fatal=0
for file in "$@"; do
  for stylesheet in CEN-EN16931-UBL.xslt PEPPOL-EN16931-UBL.xslt; do
    java -cp "$saxon" net.sf.saxon.Transform -s:"$file" -xsl:"$artefacts/$stylesheet" -o:"$report"
    # One line per failed assertion: flag, rule id, text.
    failures=$(java -cp "$saxon" net.sf.saxon.Query -s:"$report" \
      -qs:'declare namespace svrl="http://purl.oclc.org/dsdl/svrl"; string-join(//svrl:failed-assert ! concat(@flag, " ", @id, " ", normalize-space(svrl:text)), "&#10;")' \
      '!method=text')
    if [ -n "$failures" ]; then
      echo "$file ($stylesheet):"
      echo "$failures" | sed 's/^/  /'
      if echo "$failures" | grep -q '^fatal '; then fatal=1; fi
    fi
  done
  echo "$file: checked"
done
exit "$fatal"
