//! A tar archive (POSIX ustar) written in memory: "download results" hands over a run's CSV
//! files as one file that every system unpacks (`tar xf`), with no compression crate. Every
//! entry has mode 0644, owner 0 and time 0, so the same files give the same bytes.

/// The archive of `files` (`(name, bytes)`, each name at most 100 bytes) under `folder`.
pub fn archive(folder: &str, files: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, bytes) in files {
        out.extend_from_slice(&header(&format!("{folder}/{name}"), bytes.len()));
        out.extend_from_slice(bytes);
        out.resize(out.len().next_multiple_of(512), 0);
    }
    // Two zero blocks end the archive.
    out.resize(out.len() + 1024, 0);
    out
}

/// A ustar header block for a regular file. Names longer than 100 bytes are cut (the
/// playground's are a scenario name and a CSV file's name).
fn header(name: &str, size: usize) -> [u8; 512] {
    let mut h = [0u8; 512];
    let name = name.as_bytes();
    let n = name.len().min(100);
    h[..n].copy_from_slice(&name[..n]);
    let octal = |field: &mut [u8], value: u64| {
        let digits = format!("{value:0width$o}", width = field.len() - 1);
        field[..digits.len()].copy_from_slice(digits.as_bytes());
    };
    octal(&mut h[100..108], 0o644);
    octal(&mut h[108..116], 0);
    octal(&mut h[116..124], 0);
    octal(&mut h[124..136], size as u64);
    octal(&mut h[136..148], 0);
    h[156] = b'0';
    h[257..263].copy_from_slice(b"ustar\0");
    h[263..265].copy_from_slice(b"00");
    // The checksum counts its own field as eight spaces.
    h[148..156].copy_from_slice(b"        ");
    let sum: u32 = h.iter().map(|&b| u32::from(b)).sum();
    let digits = format!("{sum:06o}\0 ");
    h[148..156].copy_from_slice(digits.as_bytes());
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_blocks_with_a_valid_checksum() {
        let files = vec![
            ("a.csv".to_string(), b"x,y\n1,2\n".to_vec()),
            ("b.csv".to_string(), vec![b'z'; 600]),
        ];
        let tar = archive("herd", &files);
        assert_eq!(tar.len(), 512 + 512 + 512 + 1024 + 1024);
        let h = &tar[..512];
        assert_eq!(&h[..10], b"herd/a.csv");
        assert_eq!(&h[124..136], b"00000000010\0");
        let stored = u32::from_str_radix(std::str::from_utf8(&h[148..154]).unwrap(), 8).unwrap();
        let mut blank = h.to_vec();
        blank[148..156].copy_from_slice(b"        ");
        assert_eq!(stored, blank.iter().map(|&b| u32::from(b)).sum::<u32>());
        assert_eq!(&tar[512..520], b"x,y\n1,2\n");
        assert_eq!(&tar[1024..1034], b"herd/b.csv");
        assert!(tar[tar.len() - 1024..].iter().all(|&b| b == 0));
    }
}
