// lib/ is built with hidden visibility; TRAINFIT_API marks the public surface.
#pragma once
#if defined(__GNUC__)
#define TRAINFIT_API __attribute__((visibility("default")))
#else
#define TRAINFIT_API
#endif
