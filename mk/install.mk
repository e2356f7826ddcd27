# mk/install.mk - make install / make uninstall (included from the Makefile;
# the work is mk/install.sh's). GNU conventions: PREFIX, DESTDIR.
PREFIX  ?= /usr/local
DESTDIR ?=

## install: install the programs, data and man pages into DESTDIR/PREFIX (/usr/local)
install: all
	$(Q)mk/install.sh install $(BIN) "$(DESTDIR)" $(PREFIX) $(PROGRAMS) $(if $(NVCC),train_bert)

## uninstall: remove what make install put into DESTDIR/PREFIX
uninstall:
	$(Q)mk/install.sh uninstall $(BIN) "$(DESTDIR)" $(PREFIX) $(PROGRAMS) train_bert

.PHONY: install uninstall
