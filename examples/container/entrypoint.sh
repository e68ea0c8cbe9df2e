#!/bin/sh
# The container's entrypoint: fabricctl with its arguments. PostgreSQL's password is a secret file like the
# daemon's own (libpq reads it from PGPASSWORD, which the daemon does not know of): exported from
# $CREDENTIALS_DIRECTORY/PGPASSWORD when present, so that it never has to be written into compose.yaml.
set -eu
credential="${CREDENTIALS_DIRECTORY:-/run/secrets}/PGPASSWORD"
if [ -z "${PGPASSWORD:-}" ] && [ -r "$credential" ]; then
    PGPASSWORD="$(cat "$credential")"
    export PGPASSWORD
fi
exec fabricctl "$@"
