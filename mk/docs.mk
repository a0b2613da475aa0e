# mk/docs.mk: the API reference (docs/api/), its check, and the errors'
# catalogue (docs/errors.md).

# The API reference: LDoc reads the doc comments listed in config.ld and
# writes docs/api/ (committed, so it reads on GitHub and the file system).
# --date "" and the line removed make the output depend on the sources only;
# links to a type (href="index.html#Array") go to its section's anchor
# (Class_Array), where LDoc's own links miss it (not the module's own
# sections: Functions, Fields, Tables).
LDOC = ldoc
define ldoc_to
	rm -rf $(1)
	$(LDOC) --quiet --fatalwarnings --date "" --dir $(1) . >/dev/null
	find $(1) -name '*.html' -exec sed -i -E -e '/>Last updated /d' \
	  -e 's/href="([^"#]*)#([A-Z][A-Za-z]*)"/href="\1#Class_\2"/g' \
	  -e 's/#Class_(Functions|Fields|Tables)"/#\1"/g' {} +
endef

docs:
	@$(MAKE) --no-print-directory deps PACKAGES="$(DOC_PACKAGES)"
	$(call ldoc_to,docs/api)

# docs/api/ as make docs would write it now, an entry for every public name
# (tools/docs_coverage.lua walks the loaded module), and every example runs
# (tools/docs_examples.lua; a scratch compile cache, as one clears it)
docs-check: $(LIB)
	@$(MAKE) --no-print-directory deps PACKAGES="$(DOC_PACKAGES)"
	$(call ldoc_to,$(BUILD)/docs-api)
	@diff -r docs/api $(BUILD)/docs-api >/dev/null || \
	  { diff -r docs/api $(BUILD)/docs-api | head -40; \
	    echo "docs/api/ is not what the sources give: run make docs and commit it"; exit 1; }
	$(RUN_ENV) $(LUA) tools/docs_coverage.lua docs/api
	rm -rf $(BUILD)/docs-cache
	$(RUN_ENV) LUACUDA_CACHE_DIR=$(abspath $(BUILD))/docs-cache $(LUA) tools/docs_examples.lua docs/api

# docs/errors.md from the error sites in src/ and lua/, with a spec test for
# each found by running the specs with a helper that logs the errors caught
errors-catalogue: $(LIB) $(UNIT) $(SCAN_UNIT) $(DEPS_UNIT) $(MODCACHE_UNIT) $(REDUCE_UNIT) $(NPY_UNIT) $(RANDOM_UNITS)
	$(RUN_ENV) LUACUDA_ERRLOG=$(BUILD)/errors.log $(LUA) $(BUSTED) --helper=tools/errors_harvest.lua >/dev/null || true
	$(LUA) tools/errors_catalogue.lua $(BUILD)/errors.log > docs/errors.md
	@tail -2 docs/errors.md
