"""Walking over a Java serialization stream without deserializing it.

From metadata version 4 on, ``_metadata`` ends with ``CheckpointProperties`` written by
``java.io.ObjectOutputStream``. Nothing in it is needed here, and nothing from a checkpoint may
be executed or instantiated; but a file cut inside it must still be reported as cut. So the
stream is checked against the grammar of the Java Object Serialization Specification (section
6.4: objects, class descriptors with their fields, strings, enums, arrays, block data and
back-references), only to find where it ends. Depth and counts are bounded.
"""

from __future__ import annotations

from dataclasses import dataclass

from flinkstate.flinkcheckpoint.datainput import MAX_NESTING, DataInput

STREAM_MAGIC = 0xACED
STREAM_VERSION = 5
TC_NULL = 0x70
TC_REFERENCE = 0x71
TC_CLASSDESC = 0x72
TC_OBJECT = 0x73
TC_STRING = 0x74
TC_ARRAY = 0x75
TC_CLASS = 0x76
TC_BLOCKDATA = 0x77
TC_ENDBLOCKDATA = 0x78
TC_RESET = 0x79
TC_BLOCKDATALONG = 0x7A
TC_LONGSTRING = 0x7C
TC_PROXYCLASSDESC = 0x7D
TC_ENUM = 0x7E
BASE_HANDLE = 0x7E0000
SC_WRITE_METHOD = 0x01
SC_SERIALIZABLE = 0x02
SC_EXTERNALIZABLE = 0x04
SC_BLOCK_DATA = 0x08
#: bytes of each primitive field type code
PRIMITIVE_SIZES = {"B": 1, "C": 2, "D": 8, "F": 4, "I": 4, "J": 8, "S": 2, "Z": 1}


@dataclass
class _ClassDesc:
    name: str
    flags: int
    fields: list[str]  # type codes in order
    parent: _ClassDesc | None


class _Walker:
    def __init__(self, reader: DataInput) -> None:
        self.r = reader
        self.handles: list[object] = []

    def content(self, depth: int) -> object:
        r = self.r
        if depth > MAX_NESTING:
            r.fail(f"Java serialized objects nested at most {MAX_NESTING} deep")
        at = r.pos
        tc = r.u8("a Java serialization type code")
        if tc == TC_NULL:
            return None
        if tc == TC_REFERENCE:
            return self.reference(at)
        if tc == TC_STRING:
            return self.new(r.utf("a Java serialized string"))
        if tc == TC_LONGSTRING:
            length = r.i64("the length of a long Java string")
            r.raw(length if 0 <= length <= r.remaining else -1, "a long Java string")
            return self.new("")
        if tc in (TC_CLASSDESC, TC_PROXYCLASSDESC):
            r.pos = at
            return self.class_desc(depth)
        if tc == TC_CLASS:
            self.class_desc(depth)
            return self.new("class")
        if tc == TC_OBJECT:
            desc = self.class_desc(depth)
            if desc is None:
                r.fail("the class of a Java serialized object", at + 1)
            self.new("object")
            self.class_data(desc, depth)
            return None
        if tc == TC_ENUM:
            self.class_desc(depth)
            self.new("enum")
            self.content(depth + 1)  # the constant's name, a string
            return None
        if tc == TC_ARRAY:
            desc = self.class_desc(depth)
            if desc is None or not desc.name.startswith("["):
                r.fail("the array class of a Java serialized array", at + 1)
            self.new("array")
            size = r.count("Java array elements", 1)
            code = desc.name[1:2]
            for _ in range(size):
                self.value(code, depth)
            return None
        if tc in (TC_BLOCKDATA, TC_BLOCKDATALONG):
            r.pos = at
            self.block(depth)
            return None
        if tc == TC_RESET:
            self.handles.clear()
            return None
        r.fail(f"a Java serialization type code (0x70 to 0x7E), found 0x{tc:02X}", at)

    def new(self, value: object) -> object:
        self.handles.append(value)
        return value

    def reference(self, at: int) -> object:
        handle = self.r.i32("a Java serialization back-reference") - BASE_HANDLE
        if not 0 <= handle < len(self.handles):
            self.r.fail("a back-reference to an object read before", at)
        return self.handles[handle]

    def class_desc(self, depth: int) -> _ClassDesc | None:
        r = self.r
        at = r.pos
        tc = r.u8("a Java class descriptor")
        if tc == TC_NULL:
            return None
        if tc == TC_REFERENCE:
            desc = self.reference(at)
            if not isinstance(desc, _ClassDesc):
                r.fail("a back-reference to a class descriptor", at)
            return desc
        if tc == TC_PROXYCLASSDESC:
            for _ in range(r.count("proxy interfaces", 2)):
                r.utf("a proxy interface name")
            proxy = _ClassDesc("proxy", SC_SERIALIZABLE, [], None)
            self.new(proxy)
            self.annotation(depth)
            proxy.parent = self.class_desc(depth + 1)
            return proxy
        if tc != TC_CLASSDESC:
            r.fail(f"a Java class descriptor (0x72, 0x71 or 0x70), found 0x{tc:02X}", at)
        name = r.utf("a Java class name")
        r.i64("a serialVersionUID")
        flags = r.u8("the class descriptor flags")
        desc = _ClassDesc(name, flags, [], None)
        self.new(desc)
        count_at = r.pos
        count = r.raw(2, "the number of fields")
        fields = int.from_bytes(count, "big")
        if fields * 3 > r.remaining:
            r.fail(f"{fields} field descriptions, but only {r.remaining} bytes remain", count_at)
        for _ in range(fields):
            code_at = r.pos
            code = chr(r.u8("a field type code"))
            r.utf("a field name")
            if code in "L[":
                self.content(depth + 1)  # the field's class name, a string
            elif code not in PRIMITIVE_SIZES:
                r.fail(f"a field type code (B C D F I J S Z L [), found {code!r}", code_at)
            desc.fields.append(code)
        self.annotation(depth)
        desc.parent = self.class_desc(depth + 1)
        return desc

    def annotation(self, depth: int) -> None:
        """Contents up to ``TC_ENDBLOCKDATA`` (class or object annotations)."""
        r = self.r
        while True:
            at = r.pos
            if r.u8("an annotation or TC_ENDBLOCKDATA") == TC_ENDBLOCKDATA:
                return
            r.pos = at
            self.content(depth + 1)

    def block(self, depth: int) -> None:
        r = self.r
        tc = r.u8("block data")
        length = r.u8("a block length") if tc == TC_BLOCKDATA else r.i32("a block length")
        r.raw(length, "block data")

    def class_data(self, desc: _ClassDesc, depth: int) -> None:
        chain = []
        current: _ClassDesc | None = desc
        while current is not None:
            chain.append(current)
            if len(chain) > MAX_NESTING:
                self.r.fail(f"a class hierarchy at most {MAX_NESTING} deep")
            current = current.parent
        for cls in reversed(chain):
            if cls.flags & SC_EXTERNALIZABLE:
                if not cls.flags & SC_BLOCK_DATA:
                    self.r.fail(f"externalizable data of {cls.name} in block data mode")
                self.annotation(depth)
                continue
            for code in cls.fields:
                self.value(code, depth)
            if cls.flags & SC_WRITE_METHOD:
                self.annotation(depth)

    def value(self, code: str, depth: int) -> None:
        if code in ("L", "["):
            self.content(depth + 1)
        elif code in PRIMITIVE_SIZES:
            self.r.raw(PRIMITIVE_SIZES[code], f"a Java {code} field value")
        else:
            self.r.fail(f"a Java type code (B, C, D, F, I, J, S, Z, L or [), found {code!r}")


def skip_java_object(reader: DataInput, what: str) -> None:
    """Move past one serialized object (stream header included), checking only its structure.

    Examples
    --------
    A ``_metadata`` file ends with Flink's ``CheckpointProperties``, Java-serialized: 604 bytes in
    this one, as Flink's own loader found (``chk-48.groundtruth.json``):

    >>> from flinkstate.flinkcheckpoint import real_checkpoint
    >>> from flinkstate.flinkcheckpoint.metadata import read_metadata
    >>> checkpoint = real_checkpoint("keyed-hash-p2-p4")
    >>> data = (checkpoint / "_metadata").read_bytes()
    >>> start = read_metadata(checkpoint).trailer_offset
    >>> reader = DataInput(data, "_metadata", start)
    >>> data[start : start + 4].hex()
    'aced0005'
    >>> skip_java_object(reader, "CheckpointProperties")
    >>> reader.pos - start, reader.remaining
    (604, 0)
    """
    at = reader.pos
    magic = int.from_bytes(reader.raw(2, f"the Java serialization header of {what}"), "big")
    version = int.from_bytes(reader.raw(2, f"the Java serialization version of {what}"), "big")
    if magic != STREAM_MAGIC or version != STREAM_VERSION:
        reader.fail(f"{what} as a Java serialization stream (AC ED 00 05)", at)
    _Walker(reader).content(0)
