#include "CSystem.h"
#include <dlfcn.h>
#include <stdio.h>

static void load(struct csystem_library *library) {
    void *handle = dlopen(library->soname, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        snprintf(library->text, sizeof library->text, "%s could not be loaded (%s); install the package %s",
                 library->soname, dlerror(), library->package);
        library->failure = library->text;
        return;
    }
    for (size_t i = 0; i < library->count; i++) {
        const struct csystem_symbol *symbol = &library->symbols[i];
        if (!(*symbol->slot = dlsym(handle, symbol->name))) {
            snprintf(library->text, sizeof library->text, "%s has no %s (%s); install the package %s again",
                     library->soname, symbol->name, dlerror(), library->package);
            library->failure = library->text;
            return;
        }
    }
}

const char *csystem_library_load(struct csystem_library *library) {
    // Every call of a loaded library's function comes here first: once loaded, one read.
    if (__atomic_load_n(&library->done, __ATOMIC_ACQUIRE)) return library->failure;
    pthread_mutex_lock(&library->lock);
    if (!library->done) {
        load(library);
        __atomic_store_n(&library->done, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&library->lock);
    return library->failure;
}
