#include "CSystem.h"
#include <dlfcn.h>
#include <stdio.h>

const char *csystem_load_library(const char *soname, const char *package, const char *const names[],
                                 void **const slots[], size_t count, char *failure, size_t size) {
    void *library = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(failure, size, "%s could not be loaded (%s); install the package %s", soname, dlerror(), package);
        return failure;
    }
    for (size_t i = 0; i < count; i++) {
        if (!(*slots[i] = dlsym(library, names[i]))) {
            snprintf(failure, size, "%s has no %s (%s); install the package %s again", soname, names[i], dlerror(), package);
            return failure;
        }
    }
    return NULL;
}
