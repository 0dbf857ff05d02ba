// The MPI datatype of a C++ arithmetic type, for the typed overloads of hytask::mpi.
#pragma once

#include <mpi.h>

#include <complex>
#include <cstdint>
#include <type_traits>

namespace hytask::mpi {

template <class T>
struct datatype_traits {
  static constexpr bool known = false;
};

#define HYTASK_MPI_DATATYPE(T, D)                         \
  template <>                                             \
  struct datatype_traits<T> {                             \
    static constexpr bool known = true;                   \
    static MPI_Datatype get() noexcept { return D; }      \
  }

HYTASK_MPI_DATATYPE(char, MPI_CHAR);
HYTASK_MPI_DATATYPE(signed char, MPI_SIGNED_CHAR);
HYTASK_MPI_DATATYPE(unsigned char, MPI_UNSIGNED_CHAR);
HYTASK_MPI_DATATYPE(short, MPI_SHORT);
HYTASK_MPI_DATATYPE(unsigned short, MPI_UNSIGNED_SHORT);
HYTASK_MPI_DATATYPE(int, MPI_INT);
HYTASK_MPI_DATATYPE(unsigned, MPI_UNSIGNED);
HYTASK_MPI_DATATYPE(long, MPI_LONG);
HYTASK_MPI_DATATYPE(unsigned long, MPI_UNSIGNED_LONG);
HYTASK_MPI_DATATYPE(long long, MPI_LONG_LONG);
HYTASK_MPI_DATATYPE(unsigned long long, MPI_UNSIGNED_LONG_LONG);
HYTASK_MPI_DATATYPE(float, MPI_FLOAT);
HYTASK_MPI_DATATYPE(double, MPI_DOUBLE);
HYTASK_MPI_DATATYPE(long double, MPI_LONG_DOUBLE);
HYTASK_MPI_DATATYPE(bool, MPI_CXX_BOOL);
HYTASK_MPI_DATATYPE(std::complex<float>, MPI_CXX_FLOAT_COMPLEX);
HYTASK_MPI_DATATYPE(std::complex<double>, MPI_CXX_DOUBLE_COMPLEX);

#undef HYTASK_MPI_DATATYPE

template <class T>
concept mpi_type = datatype_traits<std::remove_cv_t<T>>::known;

template <mpi_type T>
MPI_Datatype datatype_of() noexcept {
  return datatype_traits<std::remove_cv_t<T>>::get();
}

}  // namespace hytask::mpi
