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
// std::complex: MPI's C++ complex types where mpi.h has them usable. SimGrid's SMPI (3.32)
// defines MPI_CXX_FLOAT_COMPLEX and MPI_CXX_DOUBLE_COMPLEX through symbols its smpi.h declares
// under other names (smpi_MPI_MPI_CXX_FLOAT_COMPLEX), so a use does not compile there. There,
// and in an MPI without the C++ types, MPI's C complex types, whose layout std::complex shares
// (an array of two values, real then imaginary).
#if defined(MPI_CXX_FLOAT_COMPLEX) && defined(MPI_CXX_DOUBLE_COMPLEX) && !defined(SMPI_H)
HYTASK_MPI_DATATYPE(std::complex<float>, MPI_CXX_FLOAT_COMPLEX);
HYTASK_MPI_DATATYPE(std::complex<double>, MPI_CXX_DOUBLE_COMPLEX);
#elif defined(MPI_C_FLOAT_COMPLEX) && defined(MPI_C_DOUBLE_COMPLEX)
HYTASK_MPI_DATATYPE(std::complex<float>, MPI_C_FLOAT_COMPLEX);
HYTASK_MPI_DATATYPE(std::complex<double>, MPI_C_DOUBLE_COMPLEX);
#endif

#undef HYTASK_MPI_DATATYPE

template <class T>
concept mpi_type = datatype_traits<std::remove_cv_t<T>>::known;

template <mpi_type T>
MPI_Datatype datatype_of() noexcept {
  return datatype_traits<std::remove_cv_t<T>>::get();
}

}  // namespace hytask::mpi
