//! A minimal ZIP writer (stored entries, no compression) for the addon package: enough for
//! Godot's own ZIPReader, the editor's "Install from ZIP" (AssetLib) and every unzip tool.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use crate::util::Result;

/// CRC-32 (IEEE, reflected), as ZIP requires.
fn crc32(data: &[u8]) -> u32 {
    let mut table = [0u32; 256];
    for (i, slot) in table.iter_mut().enumerate() {
        let mut c = i as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
        *slot = c;
    }
    let mut crc = !0u32;
    for &b in data {
        crc = table[((crc ^ u32::from(b)) & 0xFF) as usize] ^ (crc >> 8);
    }
    !crc
}

/// Writes `entries` (path inside the archive with `/` separators, bytes) to `out`.
/// Fails past the 4 GiB / 65,535-entry limits of plain ZIP.
pub fn write_zip(out: &Path, entries: &[(String, Vec<u8>)]) -> Result<()> {
    if entries.len() > usize::from(u16::MAX) {
        return Err(format!("{} entries are more than a plain ZIP holds", entries.len()).into());
    }
    let mut w = BufWriter::new(File::create(out)?);
    let mut central = Vec::new();
    let mut offset: u64 = 0;
    // 1980-01-01 00:00, so the archive's bytes depend on the files alone.
    let (time, date) = (0u16, (1u16 << 5) | 1);
    for (name, data) in entries {
        let crc = crc32(data);
        let size = u32::try_from(data.len()).map_err(|_| format!("{name} is over 4 GiB"))?;
        let name_len = u16::try_from(name.len()).map_err(|_| format!("{name}: name too long"))?;
        let local_offset =
            u32::try_from(offset).map_err(|_| "the package is over 4 GiB".to_string())?;
        let mut local = Vec::with_capacity(30 + name.len());
        local.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        local.extend_from_slice(&10u16.to_le_bytes()); // version needed: 1.0
        local.extend_from_slice(&0x0800u16.to_le_bytes()); // flags: UTF-8 names
        local.extend_from_slice(&0u16.to_le_bytes()); // method: stored
        local.extend_from_slice(&time.to_le_bytes());
        local.extend_from_slice(&date.to_le_bytes());
        local.extend_from_slice(&crc.to_le_bytes());
        local.extend_from_slice(&size.to_le_bytes());
        local.extend_from_slice(&size.to_le_bytes());
        local.extend_from_slice(&name_len.to_le_bytes());
        local.extend_from_slice(&0u16.to_le_bytes()); // extra length
        local.extend_from_slice(name.as_bytes());
        w.write_all(&local)?;
        w.write_all(data)?;
        offset += local.len() as u64 + data.len() as u64;

        central.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        central.extend_from_slice(&((3u16 << 8) | 20).to_le_bytes()); // made by: Unix, 2.0
        central.extend_from_slice(&local[4..30]);
        central.extend_from_slice(&0u16.to_le_bytes()); // comment length
        central.extend_from_slice(&0u16.to_le_bytes()); // disk number
        central.extend_from_slice(&0u16.to_le_bytes()); // internal attributes
        let mode: u32 = if name.ends_with(".so") || name.ends_with(".dylib") {
            0o755
        } else {
            0o644
        };
        central.extend_from_slice(&((0o100_000 | mode) << 16).to_le_bytes());
        central.extend_from_slice(&local_offset.to_le_bytes());
        central.extend_from_slice(name.as_bytes());
    }
    let central_offset =
        u32::try_from(offset).map_err(|_| "the package is over 4 GiB".to_string())?;
    let central_len = u32::try_from(central.len()).map_err(|_| "directory too large")?;
    w.write_all(&central)?;
    let count = entries.len() as u16;
    let mut end = Vec::with_capacity(22);
    end.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    end.extend_from_slice(&0u16.to_le_bytes());
    end.extend_from_slice(&0u16.to_le_bytes());
    end.extend_from_slice(&count.to_le_bytes());
    end.extend_from_slice(&count.to_le_bytes());
    end.extend_from_slice(&central_len.to_le_bytes());
    end.extend_from_slice(&central_offset.to_le_bytes());
    end.extend_from_slice(&0u16.to_le_bytes());
    w.write_all(&end)?;
    w.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_matches_the_standard_check_value() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
    }
}
