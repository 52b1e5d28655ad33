"""Key groups: which key group a key belongs to and which subtask owns a key group.

Flink shards keyed state into ``maxParallelism`` key groups. A key's group is
``murmurHash(key.hashCode()) % maxParallelism``; subtask ``i`` of ``p`` owns a contiguous range
of groups. Rescaling moves whole key groups, so these few integers decide where every keyed
record and every byte of keyed state goes. The arithmetic follows Flink's
``KeyGroupRangeAssignment`` and ``MathUtils`` and is checked against values computed by Flink's
own jar (``tests/reference``). The ``*_array`` variants do the same over numpy arrays for the
Spark pipeline's vectorised functions.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from flinkstate.errors import InvalidParameterError
from flinkstate.javahash import (
    JavaType,
    infer_java_type,
    java_hash_code,
    java_hash_codes,
    to_int32,
)

#: Flink's default lower bound when it derives max parallelism from parallelism.
DEFAULT_LOWER_BOUND_MAX_PARALLELISM = 128
#: Flink's inclusive upper bound for max parallelism
#: (``Transformation.UPPER_BOUND_MAX_PARALLELISM``).
UPPER_BOUND_MAX_PARALLELISM = 32768

_MASK32 = 0xFFFFFFFF


@dataclass(frozen=True, order=True)
class KeyGroupRange:
    """An inclusive range of key groups ``[start, end]``; ``(0, -1)`` is the empty range.

    Examples
    --------
    Subtask 1 of 3 owns the middle third of Flink's default 128 key groups:

    >>> owned = KeyGroupRange(43, 85)
    >>> len(owned), 42 in owned, 43 in owned
    (43, False, True)
    >>> print(owned.intersection(KeyGroupRange(64, 95)))
    [64, 85]
    >>> print(owned.intersection(KeyGroupRange(96, 127)))
    []
    """

    start: int
    end: int

    def __post_init__(self) -> None:
        if self.start < 0:
            raise InvalidParameterError(f"a key-group range cannot start below 0, got {self.start}")
        if self.end < self.start and (self.start, self.end) != (0, -1):
            raise InvalidParameterError(
                f"key-group range [{self.start}, {self.end}] ends before it starts; "
                "use KeyGroupRange.EMPTY for no key groups"
            )

    @classmethod
    def of(cls, start: int, end: int) -> KeyGroupRange:
        """The range ``[start, end]``, or the empty range when ``end < start``."""
        return cls(start, end) if start <= end else EMPTY_KEY_GROUP_RANGE

    @property
    def number_of_key_groups(self) -> int:
        return 1 + self.end - self.start

    def __len__(self) -> int:
        return self.number_of_key_groups

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.start, self.end + 1))

    def __contains__(self, key_group: object) -> bool:
        return isinstance(key_group, int) and self.start <= key_group <= self.end

    def intersection(self, other: KeyGroupRange) -> KeyGroupRange:
        return KeyGroupRange.of(max(self.start, other.start), min(self.end, other.end))

    def __str__(self) -> str:
        return f"[{self.start}, {self.end}]" if self.end >= self.start else "[]"


EMPTY_KEY_GROUP_RANGE = KeyGroupRange(0, -1)


def murmur_hash(code: int) -> int:
    """Flink's ``MathUtils.murmurHash``: a non-negative 32-bit hash of a Java ``int``.

    Examples
    --------
    Flink's own values (``tests/reference``):

    >>> murmur_hash(0), murmur_hash(42), murmur_hash(-1)
    (593689054, 1134849565, 1982413648)
    """
    if not -(2**31) <= code < 2**31:
        raise InvalidParameterError(f"murmur_hash takes a Java int, got {code}")
    k = code & _MASK32
    k = (k * 0xCC9E2D51) & _MASK32
    k = ((k << 15) | (k >> 17)) & _MASK32
    k = (k * 0x1B873593) & _MASK32
    k = ((k << 13) | (k >> 19)) & _MASK32
    k = (k * 5 + 0xE6546B64) & _MASK32
    k ^= 4
    k ^= k >> 16
    k = (k * 0x85EBCA6B) & _MASK32
    k ^= k >> 13
    k = (k * 0xC2B2AE35) & _MASK32
    k ^= k >> 16
    signed = to_int32(k)
    if signed >= 0:
        return signed
    return 0 if signed == -(2**31) else -signed


def check_parallelism(parallelism: int, what: str = "parallelism") -> int:
    """Flink's bounds on any parallelism: 1 to 32768.

    Examples
    --------
    >>> check_parallelism(4)
    4
    >>> check_parallelism(40000)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    flinkstate.errors.InvalidParameterError: parallelism 40000 is out of range: ...
    """
    if isinstance(parallelism, bool) or not isinstance(parallelism, int | np.integer):
        raise InvalidParameterError(f"{what} must be a whole number, got {parallelism!r}")
    if not 0 < parallelism <= UPPER_BOUND_MAX_PARALLELISM:
        raise InvalidParameterError(
            f"{what} {parallelism} is out of range: Flink accepts 1 to "
            f"{UPPER_BOUND_MAX_PARALLELISM} (Flink: 'Operator parallelism not within bounds: "
            f"{parallelism}')"
        )
    return int(parallelism)


def check_max_parallelism(max_parallelism: int) -> int:
    """Flink's bounds on max parallelism (the number of key groups): 1 to 32768.

    Examples
    --------
    >>> check_max_parallelism(128)
    128
    >>> check_max_parallelism(65536)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    flinkstate.errors.InvalidParameterError: max parallelism 65536 is above Flink's upper bound ...
    """
    if isinstance(max_parallelism, bool) or not isinstance(max_parallelism, int | np.integer):
        raise InvalidParameterError(
            f"max parallelism must be a whole number, got {max_parallelism!r}"
        )
    if max_parallelism > UPPER_BOUND_MAX_PARALLELISM:
        raise InvalidParameterError(
            f"max parallelism {max_parallelism} is above Flink's upper bound "
            f"{UPPER_BOUND_MAX_PARALLELISM}"
        )
    return check_parallelism(max_parallelism, "max parallelism")


def check_parallelism_against_max(parallelism: int, max_parallelism: int) -> None:
    """Both bounds, and ``parallelism <= max parallelism``: every subtask needs a key group.

    Examples
    --------
    Twelve subtasks cannot share ten key groups:

    >>> check_parallelism_against_max(4, 128)
    >>> check_parallelism_against_max(12, 10)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    flinkstate.errors.InvalidParameterError: parallelism 12 is above max parallelism 10: ...
    """
    check_max_parallelism(max_parallelism)
    check_parallelism(parallelism)
    if parallelism > max_parallelism:
        raise InvalidParameterError(
            f"parallelism {parallelism} is above max parallelism {max_parallelism}: every "
            "subtask needs at least one key group (Flink: 'Maximum parallelism must not be "
            "smaller than parallelism.')"
        )


def _check_index(index: int, limit: int, what: str) -> None:
    if not 0 <= index < limit:
        raise InvalidParameterError(f"{what} {index} is out of range 0 to {limit - 1}")


def compute_default_max_parallelism(parallelism: int) -> int:
    """Max parallelism Flink picks when none is configured: 1.5 x parallelism rounded up to a
    power of two, at least 128 and at most 32768.

    Examples
    --------
    Flink's own values (``tests/reference``): up to 85 subtasks get 128 key groups, 86 (1.5 x 86
    is 129) get 256:

    >>> compute_default_max_parallelism(4), compute_default_max_parallelism(85)
    (128, 128)
    >>> compute_default_max_parallelism(86), compute_default_max_parallelism(1000)
    (256, 2048)
    """
    check_parallelism(parallelism)
    target = parallelism + parallelism // 2
    power = 1 << (target - 1).bit_length()
    return min(max(power, DEFAULT_LOWER_BOUND_MAX_PARALLELISM), UPPER_BOUND_MAX_PARALLELISM)


def compute_key_group_for_key_hash(key_hash: int, max_parallelism: int) -> int:
    """The key group of a key whose Java ``hashCode()`` is ``key_hash``.

    Examples
    --------
    ``Integer`` 42 hashes to itself, so it lands where Flink puts the key 42:

    >>> compute_key_group_for_key_hash(42, 128)
    29
    >>> compute_key_group_for_key_hash(42, 32768)
    28189
    """
    check_max_parallelism(max_parallelism)
    return murmur_hash(key_hash) % max_parallelism


def assign_to_key_group(
    key: object, max_parallelism: int, java_type: JavaType | str | None = None
) -> int:
    """The key group of ``key`` (``KeyGroupRangeAssignment.assignToKeyGroup``).

    Examples
    --------
    The key groups Flink's ``KeyGroupRangeAssignment.assignToKeyGroup`` gives:

    >>> assign_to_key_group(42, 128, "int")
    29
    >>> assign_to_key_group("Flink", 128)
    127

    An ``Integer`` and a ``Long`` of the same negative value hash differently:

    >>> assign_to_key_group(-1, 128, "int"), assign_to_key_group(-1, 128, "long")
    (80, 94)
    """
    return compute_key_group_for_key_hash(java_hash_code(key, java_type), max_parallelism)


def compute_key_group_range_for_operator_index(
    max_parallelism: int, parallelism: int, operator_index: int
) -> KeyGroupRange:
    """The key groups subtask ``operator_index`` of ``parallelism`` owns.

    Examples
    --------
    >>> print(compute_key_group_range_for_operator_index(128, 3, 1))
    [43, 85]
    >>> print(compute_key_group_range_for_operator_index(10, 3, 0))
    [0, 3]
    """
    check_parallelism_against_max(parallelism, max_parallelism)
    _check_index(operator_index, parallelism, "subtask index")
    start = (operator_index * max_parallelism + parallelism - 1) // parallelism
    end = ((operator_index + 1) * max_parallelism - 1) // parallelism
    return KeyGroupRange(start, end)


def key_group_ranges(max_parallelism: int, parallelism: int) -> tuple[KeyGroupRange, ...]:
    """The key-group range of every subtask, in subtask order.

    Examples
    --------
    >>> [str(r) for r in key_group_ranges(128, 3)]
    ['[0, 42]', '[43, 85]', '[86, 127]']
    >>> [len(r) for r in key_group_ranges(128, 7)]
    [19, 18, 18, 19, 18, 18, 18]
    """
    check_parallelism_against_max(parallelism, max_parallelism)
    return tuple(
        compute_key_group_range_for_operator_index(max_parallelism, parallelism, index)
        for index in range(parallelism)
    )


def compute_operator_index_for_key_group(
    max_parallelism: int, parallelism: int, key_group: int
) -> int:
    """The subtask that owns ``key_group`` at ``parallelism``.

    Examples
    --------
    Key group 29 belongs to subtask 0 of 4, and to subtask 1 of 7:

    >>> compute_operator_index_for_key_group(128, 4, 29)
    0
    >>> compute_operator_index_for_key_group(128, 7, 29)
    1
    """
    check_parallelism_against_max(parallelism, max_parallelism)
    _check_index(key_group, max_parallelism, "key group")
    return key_group * parallelism // max_parallelism


def assign_key_to_parallel_operator(
    key: object,
    max_parallelism: int,
    parallelism: int,
    java_type: JavaType | str | None = None,
) -> int:
    """The subtask a keyed exchange sends ``key`` to (``KeyGroupStreamPartitioner``).

    Examples
    --------
    The subtask a ``keyBy`` sends a key to (Flink's ``KeyGroupStreamPartitioner``):

    >>> assign_key_to_parallel_operator("Flink", 128, 4)
    3
    >>> assign_key_to_parallel_operator(42, 128, 7, "long")
    1
    """
    check_parallelism_against_max(parallelism, max_parallelism)
    return compute_operator_index_for_key_group(
        max_parallelism, parallelism, assign_to_key_group(key, max_parallelism, java_type)
    )


@dataclass(frozen=True)
class KeyPlacement:
    """Every step from a key to its subtask, for explaining a placement.

    Examples
    --------
    >>> placement = place_key("key", 128, 3)
    >>> placement.hash_code, placement.murmur_hash, placement.key_group, placement.subtask
    (106079, 801471432, 72, 1)
    >>> print(placement.subtask_key_groups)
    [43, 85]
    """

    key: object
    java_type: JavaType
    hash_code: int
    murmur_hash: int
    key_group: int
    subtask: int
    subtask_key_groups: KeyGroupRange


def place_key(
    key: object,
    max_parallelism: int,
    parallelism: int,
    java_type: JavaType | str | None = None,
) -> KeyPlacement:
    """Where a keyed exchange sends ``key``, with the intermediate values.

    Examples
    --------
    >>> placement = place_key(4294967296, 128, 4, "long")
    >>> placement.java_type.java_name, placement.hash_code
    ('Long', 1)
    >>> placement.key_group, placement.subtask, str(placement.subtask_key_groups)
    (86, 2, '[64, 95]')
    """
    check_parallelism_against_max(parallelism, max_parallelism)
    kind = infer_java_type(key) if java_type is None else JavaType.parse(java_type)
    code = java_hash_code(key, kind)
    hashed = murmur_hash(code)
    group = hashed % max_parallelism
    subtask = compute_operator_index_for_key_group(max_parallelism, parallelism, group)
    return KeyPlacement(
        key=key,
        java_type=kind,
        hash_code=code,
        murmur_hash=hashed,
        key_group=group,
        subtask=subtask,
        subtask_key_groups=compute_key_group_range_for_operator_index(
            max_parallelism, parallelism, subtask
        ),
    )


# --- vectorised variants -------------------------------------------------------------------


def murmur_hash_array(codes: npt.ArrayLike) -> npt.NDArray[np.int32]:
    """``murmur_hash`` over an array of Java ints, bit-identical to the scalar version.

    Examples
    --------
    >>> murmur_hash_array([0, 42, -1]).tolist()
    [593689054, 1134849565, 1982413648]
    """
    k = np.asarray(codes)
    if k.dtype.kind not in "iu":
        raise InvalidParameterError(f"murmur_hash_array needs integers, got dtype {k.dtype}")
    if k.size and (k.min() < -(2**31) or k.max() > 2**31 - 1):
        raise InvalidParameterError("murmur_hash_array takes Java ints (32-bit values)")
    k = k.astype(np.int32).view(np.uint32).copy()
    with np.errstate(over="ignore"):
        k *= np.uint32(0xCC9E2D51)
        k = (k << np.uint32(15)) | (k >> np.uint32(17))
        k *= np.uint32(0x1B873593)
        k = (k << np.uint32(13)) | (k >> np.uint32(19))
        k = k * np.uint32(5) + np.uint32(0xE6546B64)
        k ^= np.uint32(4)
        k ^= k >> np.uint32(16)
        k *= np.uint32(0x85EBCA6B)
        k ^= k >> np.uint32(13)
        k *= np.uint32(0xC2B2AE35)
        k ^= k >> np.uint32(16)
    signed = k.view(np.int32).astype(np.int64)
    result = np.where(signed >= 0, signed, -signed)
    result[signed == -(2**31)] = 0
    return result.astype(np.int32)


def assign_to_key_group_array(
    keys: npt.ArrayLike, max_parallelism: int, java_type: JavaType | str = JavaType.LONG
) -> npt.NDArray[np.int32]:
    """Key groups of an array of Integer, Long or String keys.

    Examples
    --------
    >>> assign_to_key_group_array([42, -1, 4294967296], 128).tolist()
    [29, 94, 86]
    >>> assign_to_key_group_array(["key", "Flink"], 128, "string").tolist()
    [72, 127]
    """
    check_max_parallelism(max_parallelism)
    hashes = murmur_hash_array(java_hash_codes(keys, java_type))
    return (hashes % np.int32(max_parallelism)).astype(np.int32)


def compute_operator_index_for_key_group_array(
    max_parallelism: int, parallelism: int, key_groups: npt.ArrayLike
) -> npt.NDArray[np.int32]:
    """Owning subtask of each key group in an array.

    Examples
    --------
    >>> compute_operator_index_for_key_group_array(128, 3, [0, 42, 43, 85, 86, 127]).tolist()
    [0, 0, 1, 1, 2, 2]
    """
    check_parallelism_against_max(parallelism, max_parallelism)
    groups = np.asarray(key_groups).astype(np.int64)
    if groups.size and (groups.min() < 0 or groups.max() >= max_parallelism):
        raise InvalidParameterError(
            f"key groups must lie in 0 to {max_parallelism - 1} for max parallelism "
            f"{max_parallelism}"
        )
    return (groups * parallelism // max_parallelism).astype(np.int32)


def assign_key_to_parallel_operator_array(
    keys: npt.ArrayLike,
    max_parallelism: int,
    parallelism: int,
    java_type: JavaType | str = JavaType.LONG,
) -> npt.NDArray[np.int32]:
    """Target subtask of each Integer, Long or String key for a keyed exchange.

    Examples
    --------
    >>> assign_key_to_parallel_operator_array([42, -1, 4294967296], 128, 3).tolist()
    [0, 2, 2]
    >>> assign_key_to_parallel_operator_array([7, 10, 45, 90], 10, 3, "int").tolist()
    [0, 2, 1, 0]
    """
    check_parallelism_against_max(parallelism, max_parallelism)
    groups = assign_to_key_group_array(keys, max_parallelism, java_type)
    return compute_operator_index_for_key_group_array(max_parallelism, parallelism, groups)
