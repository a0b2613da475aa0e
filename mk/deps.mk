# mk/deps.mk: the Debian packages a target needs (apt), and the GPU
# machine's devkit.

# For a GPU machine (no apt there): the shared devkit (Lua, busted) plus the
# packages the build needs beyond Lua; tools/devkit-env sets the paths.
devkit:
	mkdir -p "$$(git rev-parse --git-path info)"
	../shared/devkit/prepare
	cd .devkit/debs && { ls libdlpack-dev_*.deb >/dev/null 2>&1 || apt-get download libdlpack-dev; }

# Install the Debian packages that are missing: with apt as root, otherwise
# print the command and stop.
deps:
	@missing=""; \
	for p in $(PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing:$$missing"; \
	    export DEBIAN_FRONTEND=noninteractive; \
	    apt-get install -y -q $$missing >/dev/null 2>&1 || \
	    { apt-get update -q >/dev/null && apt-get install -y -q $$missing; } || exit 1; \
	  else \
	    echo "luacuda needs these Debian packages:$$missing"; \
	    echo "  sudo apt-get install -y$$missing"; \
	    exit 1; \
	  fi; \
	fi
