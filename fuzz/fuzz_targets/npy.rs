//! Fuzzes the root crate's `.npy` reader (`tessera::npy::NpyArray::from_bytes`) on arbitrary
//! bytes. Checks: it never panics; an array it returns passes `check` (its data holds exactly
//! `shape` elements of `dtype`); written back (`to_bytes`, the bytes `numpy.save` would write)
//! it reads back equal; `to_f32_vec` does not panic and gives one value per element.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tessera::npy::NpyArray;

fuzz_target!(|data: &[u8]| {
    let array = match NpyArray::from_bytes(data) {
        Ok(array) => array,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    array
        .check()
        .unwrap_or_else(|e| panic!("a read array fails check: {e}"));
    let bytes = array.to_bytes();
    let again = NpyArray::from_bytes(&bytes)
        .unwrap_or_else(|e| panic!("a written array does not read back: {e}"));
    assert_eq!(again, array, ".npy round trip");
    if let Ok(values) = array.to_f32_vec() {
        assert_eq!(values.len(), array.element_count());
    }
});
