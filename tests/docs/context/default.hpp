// The context of a fragment that names none: hytask's public headers and the standard
// headers that examples take for granted.
#pragma once

#include <span>
#include <vector>

#include <hytask/hytask.hpp>
#include <hytask/mpi.hpp>
