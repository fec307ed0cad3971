//! The one fact the package reads from the Linux library's ELF file: its `DT_FLAGS_1` entry,
//! which says whether the library is linked `-z nodelete` (see `rust/vat_gdext/build.rs`).

/// `DF_1_NODELETE`: the library stays mapped when it is closed.
pub const DF_1_NODELETE: u64 = 0x8;
/// Dynamic-section tag of the extra flags.
const DT_FLAGS_1: u64 = 0x6fff_fffb;
/// Program-header type of the dynamic segment.
const PT_DYNAMIC: u32 = 2;

/// The `DT_FLAGS_1` value of a 64-bit little-endian ELF file (0 when it has none), or what is
/// wrong with the bytes.
pub fn flags_1(bytes: &[u8]) -> Result<u64, String> {
    if bytes.get(..6) != Some(b"\x7fELF\x02\x01") {
        return Err("not a 64-bit little-endian ELF file".into());
    }
    let short = |what: &str| format!("the file ends inside its {what}");
    let read = |at: usize, len: usize, what: &str| -> Result<u64, String> {
        let b = bytes.get(at..at + len).ok_or_else(|| short(what))?;
        Ok(b.iter().rev().fold(0u64, |v, &x| v << 8 | u64::from(x)))
    };
    let at =
        |v: u64| usize::try_from(v).map_err(|_| "an offset past this machine's range".to_string());
    let table = at(read(0x20, 8, "header")?)?;
    let entry = at(read(0x36, 2, "header")?)?;
    let count = at(read(0x38, 2, "header")?)?;
    for i in 0..count {
        let ph = table + i * entry;
        if read(ph, 4, "program headers")? != u64::from(PT_DYNAMIC) {
            continue;
        }
        let (start, size) = (
            at(read(ph + 8, 8, "program headers")?)?,
            at(read(ph + 32, 8, "program headers")?)?,
        );
        for e in (start..start + size).step_by(16) {
            match read(e, 8, "dynamic section")? {
                0 => break,
                DT_FLAGS_1 => return read(e + 8, 8, "dynamic section"),
                _ => {}
            }
        }
        return Ok(0);
    }
    Err("no dynamic segment: not a shared library".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal ELF64 file: the header, one program header (PT_DYNAMIC at 0x78) and the
    /// dynamic entries `(tag, value)`, then DT_NULL.
    fn elf(entries: &[(u64, u64)]) -> Vec<u8> {
        let mut b = vec![0u8; 0x78];
        b[..6].copy_from_slice(b"\x7fELF\x02\x01");
        b[0x20..0x28].copy_from_slice(&0x40u64.to_le_bytes());
        b[0x36..0x38].copy_from_slice(&0x38u16.to_le_bytes());
        b[0x38..0x3a].copy_from_slice(&1u16.to_le_bytes());
        b[0x40..0x44].copy_from_slice(&PT_DYNAMIC.to_le_bytes());
        b[0x48..0x50].copy_from_slice(&0x78u64.to_le_bytes());
        let size = 16 * (entries.len() as u64 + 1);
        b[0x60..0x68].copy_from_slice(&size.to_le_bytes());
        for &(tag, value) in entries.iter().chain(&[(0, 0)]) {
            b.extend(tag.to_le_bytes());
            b.extend(value.to_le_bytes());
        }
        b
    }

    #[test]
    fn reads_the_flags_entry_wherever_it_is() {
        assert_eq!(flags_1(&elf(&[(1, 5), (DT_FLAGS_1, 0x9)])), Ok(0x9));
        assert_eq!(
            flags_1(&elf(&[(DT_FLAGS_1, DF_1_NODELETE)])),
            Ok(DF_1_NODELETE)
        );
        // No entry, or one after DT_NULL: no flags.
        assert_eq!(flags_1(&elf(&[(1, 5)])), Ok(0));
        let mut after_null = elf(&[(1, 5)]);
        after_null.extend(DT_FLAGS_1.to_le_bytes());
        after_null.extend(8u64.to_le_bytes());
        assert_eq!(flags_1(&after_null), Ok(0));
    }

    #[test]
    fn refuses_what_is_not_a_whole_elf_file() {
        assert!(flags_1(b"PK\x03\x04 a zip").is_err());
        let whole = elf(&[(DT_FLAGS_1, 8)]);
        assert!(flags_1(&whole[..whole.len() - 20])
            .unwrap_err()
            .contains("ends inside"));
        let mut no_dynamic = elf(&[]);
        no_dynamic[0x40] = 1;
        assert!(flags_1(&no_dynamic)
            .unwrap_err()
            .contains("no dynamic segment"));
    }
}
