//! Reading and rewriting the UID in the header of a resource file Godot just wrote, so a save
//! through a temporary file keeps the target's UID (Godot gives the temporary path a new one).
//!
//! Binary `.res` (`RSRC`): magic, then six u32 (endianness, 64-bit flag, version major, minor,
//! format), the class name (u32 length including the NUL, the bytes, the NUL), a u64 import
//! metadata offset, u32 flags, then the u64 UID. Text `.tres`: `uid="uid://..."` in the first
//! line. Callers check the UID read here against Godot's own reading
//! (`ResourceLoader.get_resource_uid`) before rewriting it, so a format this does not know is
//! never patched.

/// Byte offset and endianness of the UID in a binary resource, if `bytes` is one.
fn binary_uid_offset(bytes: &[u8]) -> Option<(usize, bool)> {
    if bytes.get(..4)? != b"RSRC" {
        return None;
    }
    let big_endian = u32::from_le_bytes(bytes.get(4..8)?.try_into().ok()?) != 0;
    let read_u32 = |at: usize| -> Option<u32> {
        let b: [u8; 4] = bytes.get(at..at + 4)?.try_into().ok()?;
        Some(if big_endian {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        })
    };
    let name_len = (read_u32(24)? & 0x7FFF_FFFF) as usize;
    let at = 28 + name_len + 8 + 4;
    (bytes.len() >= at + 8).then_some((at, big_endian))
}

/// The UID stored in a binary resource's header.
pub fn binary_uid(bytes: &[u8]) -> Option<i64> {
    let (at, big) = binary_uid_offset(bytes)?;
    let b: [u8; 8] = bytes[at..at + 8].try_into().ok()?;
    Some(if big {
        i64::from_be_bytes(b)
    } else {
        i64::from_le_bytes(b)
    })
}

/// Writes `uid` into a binary resource's header; false if `bytes` is not one.
pub fn set_binary_uid(bytes: &mut [u8], uid: i64) -> bool {
    let Some((at, big)) = binary_uid_offset(bytes) else {
        return false;
    };
    let b = if big {
        uid.to_be_bytes()
    } else {
        uid.to_le_bytes()
    };
    bytes[at..at + 8].copy_from_slice(&b);
    true
}

/// The first line of a text resource with its `uid="..."` value replaced by `uid_text`
/// (`uid://...`); `None` if the first line has no UID.
pub fn set_text_uid(text: &str, uid_text: &str) -> Option<String> {
    let line_end = text.find('\n').unwrap_or(text.len());
    let first = &text[..line_end];
    let start = first.find(" uid=\"")? + " uid=\"".len();
    let len = first[start..].find('"')?;
    Some(format!(
        "{}{uid_text}{}",
        &text[..start],
        &text[start + len..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binary(name: &str, uid: i64) -> Vec<u8> {
        let mut b = b"RSRC".to_vec();
        for v in [0u32, 0, 4, 6, 6] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.extend_from_slice(&(name.len() as u32 + 1).to_le_bytes());
        b.extend_from_slice(name.as_bytes());
        b.push(0);
        b.extend_from_slice(&0u64.to_le_bytes());
        b.extend_from_slice(&2u32.to_le_bytes());
        b.extend_from_slice(&uid.to_le_bytes());
        b.extend_from_slice(&[0; 64]);
        b
    }

    #[test]
    fn binary_uid_is_read_and_rewritten_in_place() {
        let mut b = binary("VertexAnimation", 1234567890123);
        assert_eq!(binary_uid(&b), Some(1234567890123));
        let len = b.len();
        assert!(set_binary_uid(&mut b, 42));
        assert_eq!(binary_uid(&b), Some(42));
        assert_eq!(b.len(), len);
        assert_eq!(binary_uid(b"RSCC"), None);
        assert!(!set_binary_uid(&mut b"RSRC".to_vec(), 1));
    }

    #[test]
    fn text_uid_is_replaced_on_the_first_line_only() {
        let t = "[gd_resource type=\"X\" format=3 uid=\"uid://abc\"]\n\n[resource]\nuid=\"uid://keep\"\n";
        let out = set_text_uid(t, "uid://new").unwrap();
        assert!(out.starts_with("[gd_resource type=\"X\" format=3 uid=\"uid://new\"]\n"));
        assert!(out.ends_with("uid=\"uid://keep\"\n"));
        assert_eq!(
            set_text_uid("[gd_resource type=\"X\" format=3]\n", "uid://n"),
            None
        );
    }
}
