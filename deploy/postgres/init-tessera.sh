#!/bin/sh
# Run once by the postgres image on an empty data directory (/docker-entrypoint-initdb.d), as the
# superuser. Creates the service's own role and database, so that Tessera does not run as a superuser
# (a superuser bypasses the audit log's privileges: README, "Audit immutability"), and the audit owner
# role with the grant its migrations need (README, "Managed PostgreSQL", option b).
#
# Environment (compose.yaml passes deploy/postgres.env): TESSERA_DB_PASSWORD (required), TESSERA_DB_USER
# and TESSERA_DB_NAME (default tessera). The same password goes into DATABASE_URL in deploy/tessera.env.
set -eu

: "${TESSERA_DB_PASSWORD:?set TESSERA_DB_PASSWORD (deploy/postgres.env)}"
db_user="${TESSERA_DB_USER:-tessera}"
db_name="${TESSERA_DB_NAME:-tessera}"

psql -v ON_ERROR_STOP=1 --no-psqlrc --username "${POSTGRES_USER:-postgres}" --dbname "${POSTGRES_DB:-postgres}" \
  -v db_user="$db_user" -v db_name="$db_name" -v db_password="$TESSERA_DB_PASSWORD" <<'SQL'
-- PostgreSQL 16 split role membership into ADMIN, INHERIT and SET, which the grant below needs. On 15 a
-- WITH ADMIN OPTION grant is removed by the first migration that uses it (0002), and 0003 then fails.
DO $$
BEGIN
  IF current_setting('server_version_num')::int < 160000 THEN
    RAISE EXCEPTION 'init-tessera.sh needs PostgreSQL 16 or later (README, "Managed PostgreSQL")';
  END IF;
END
$$;
CREATE ROLE :"db_user" LOGIN PASSWORD :'db_password';
-- The owner role is cluster-wide; another Tessera database on this server may have made it already.
SELECT NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'tessera_audit_owner') AS make_owner \gset
\if :make_owner
CREATE ROLE tessera_audit_owner NOLOGIN;
\endif
-- The ADMIN option alone: each migration that changes the audit log's objects grants the service's role
-- the owner role for that moment and revokes it again; outside a migration the service can neither SET
-- ROLE to it nor inherit its privileges (README, "Managed PostgreSQL", option b).
GRANT tessera_audit_owner TO :"db_user" WITH ADMIN TRUE, INHERIT FALSE, SET FALSE;
-- The database owner owns its public schema (PostgreSQL 15+), so the service may create its tables.
CREATE DATABASE :"db_name" OWNER :"db_user";
SQL
