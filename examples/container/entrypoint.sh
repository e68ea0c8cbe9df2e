#!/bin/sh
# The container's entrypoint: fabricctl with its arguments. PostgreSQL's password is a secret file like the
# daemon's own, $CREDENTIALS_DIRECTORY/PGPASSWORD, exported for libpq (the daemon does not know of it), so that it
# never has to be written into compose.yaml. The daemon's rules apply: an empty credential, or PGPASSWORD also set
# to another value, is refused in one line (exit 2) rather than one of them silently used.
set -eu
credential="${CREDENTIALS_DIRECTORY:-/run/secrets}/PGPASSWORD"
if [ -e "$credential" ]; then
    if ! password="$(cat "$credential" 2>/dev/null)"; then
        echo "fabric-entrypoint: error: PGPASSWORD: cannot read the credential $credential" >&2
        exit 2
    fi
    if [ -z "$password" ]; then
        echo "fabric-entrypoint: error: PGPASSWORD: the credential $credential is empty" >&2
        exit 2
    fi
    if [ -n "${PGPASSWORD:-}" ] && [ "$PGPASSWORD" != "$password" ]; then
        echo "fabric-entrypoint: error: PGPASSWORD and the credential $credential are both set, to different" \
             "values: unset or remove one" >&2
        exit 2
    fi
    PGPASSWORD="$password"
    export PGPASSWORD
fi
exec fabricctl "$@"
