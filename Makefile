.PHONY: install run test generate check-generated typecheck lint lint-openapi tap bench ci

# Installs exactly what the lockfile says, only when node_modules is missing or older than it.
node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

install: node_modules/.installed

run: install
	npm start

generate: install
	npm run generate

check-generated: install
	npx tsx scripts/generate.ts --check

typecheck: install
	npx tsc --noEmit

lint: install
	npx eslint .
	npx prettier --check .
	npx spectral lint generated/openapi.json --ruleset .spectral.yaml --fail-severity=hint

lint-openapi: install
	npx redocly lint openapi/openapi.yaml

# The suite on PGlite always; again on a real PostgreSQL when TEST_DATABASE_URL names one.
# Every response the suite gets is checked against the document, and its (operationId, status) pair is
# recorded; contract-coverage fails when a declared status was never exercised and is not excused.
COVERAGE_DIR := .tap/contract-coverage
tap: install
	rm -rf $(COVERAGE_DIR)
	CONTRACT_COVERAGE_DIR=$(COVERAGE_DIR) TEST_BACKEND=pglite npx tap
	@if [ -n "$$TEST_DATABASE_URL" ]; then CONTRACT_COVERAGE_DIR=$(COVERAGE_DIR) TEST_BACKEND=postgres npx tap; fi
	npx tsx scripts/contract-coverage.ts $(COVERAGE_DIR)

# The README's test command: everything CI checks.
test: typecheck lint lint-openapi check-generated check-sdk tap

bench: install
	npm run bench

# The TypeScript SDK (clients/typescript, @tessera/client): its generated types follow generated/openapi.json.
.PHONY: sdk check-sdk
sdk: generate
	npx tsx scripts/generate-sdk.ts
	cd clients/typescript && npx tsc -p tsconfig.json

# The generated part is current, and the package compiles on its own terms (no Node types: browser-safe).
check-sdk: install
	npx tsx scripts/generate-sdk.ts --check
	cd clients/typescript && npx tsc -p tsconfig.json --noEmit
