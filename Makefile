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

lint-openapi: install
	npx redocly lint openapi/openapi.yaml

tap: install
	npx tap

# The README's test command: everything CI checks.
test: typecheck lint lint-openapi check-generated tap

bench: install
	npm run bench
