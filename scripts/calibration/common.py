"""Numbers (IEEE half and single through `struct`), the data file of one run, and `.npy` reading."""

import struct

def f16_bits(x):
    """The IEEE half nearest to x (round to nearest even), as bits."""
    try:
        return struct.unpack("<H", struct.pack("<e", x))[0]
    except OverflowError:
        return 0x7C00 if x > 0 else 0xFC00


def f16_value(bits):
    return struct.unpack("<e", struct.pack("<H", bits))[0]


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f32_value(bits):
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def f32(x):
    """x rounded to the nearest f32 (ties to even)."""
    return f32_value(f32_bits(x))


class Data:
    """The data file of one run: labelled blocks of words and halves, 8-byte aligned."""

    def __init__(self):
        self.lines = ["    .section .data.calibration", "    .align 8"]

    def words(self, label, values, guard=False):
        self.lines += ["    .align 8", f"{label}:"] + [f"    .int {v}" for v in values]
        if guard:
            self.guard(label)

    def halves(self, label, bits):
        self.lines += ["    .align 8", f"{label}:"] + [f"    .short {b}" for b in bits]
        self.guard(label)

    def guard(self, label):
        """Two words after an output, which the codelet must leave as they are."""
        self.lines += ["    .align 8", f"{label}_guard:", "    .int 0x5a5a5a5a, 0x5a5a5a5a"]

    def space(self, label, size, align=8):
        self.lines += [f"    .align {align}", f"{label}:", f"    .space {size}"]

    def text(self):
        return "\n".join(self.lines) + "\n"


def read_npy(path):
    raw = open(path, "rb").read()
    header = struct.unpack("<H", raw[8:10])[0]
    return raw[10 + header :]
