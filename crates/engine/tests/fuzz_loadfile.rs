//! Fuzzing dbench's loadfile grammar: arbitrary text, the lines of a real
//! client.txt mutated, and loadfile tokens strung together. Nothing may
//! panic; a refusal names a line the text has, and every line before it
//! parses; a parsed file's paths lie in its text and resolve for client 1 to
//! themselves.

use crate::fuzz_support::{config, input};
use crest_engine::fileops::Loadfile;
use proptest::prelude::*;

/// Lines of every kind, as dbench 4's client.txt and its timestamped variant write them.
const SEED: &str = r#"# dbench 4 loadfile
Deltree "\clients\client1" NT_STATUS_OK
Mkdir "\clients" NT_STATUS_OK
Rmdir "\clients\client1\~dmtmp" NT_STATUS_OK
NTCreateX "\clients\client1" 0x1 0x2 16385 NT_STATUS_OK
Close 16385 NT_STATUS_OK
ReadX 10003 0 4096 4096 NT_STATUS_OK
WriteX 10002 1835008 32768 32768 NT_STATUS_OK
Flush 10002 NT_STATUS_OK
LockX 10430 2147483538 1 NT_STATUS_OK
UnlockX 10430 2147483538 1 NT_STATUS_OK
Rename "\clients\client1\~dmtmp\PWRPNT\NEWPCB.PPT" "\clients\client1\~dmtmp\PWRPNT\PPTC112.TMP" NT_STATUS_OK
Unlink "\clients\client1\~dmtmp\PM\BDES1.PRN" 0x6 NT_STATUS_OK
QUERY_PATH_INFORMATION "\clients\client1\~dmtmp" 1004 NT_STATUS_OBJECT_NAME_NOT_FOUND
QUERY_FILE_INFORMATION 9938 258 NT_STATUS_OK
SET_FILE_INFORMATION 9938 1004 NT_STATUS_OK
QUERY_FS_INFORMATION 259 NT_STATUS_OK
FIND_FIRST "\clients\client1\~dmtmp\<.JNK" 260 1366 0 NT_STATUS_NO_SUCH_FILE
40.380244000 WriteX 0x2724 0 602 602 0x00000000
1.5 Close 7 0xC0000034
Close 010 ERROR
close 7 SUCCESS
Close 7 *
"#;

const TOKENS: &[&[u8]] = &[
    b"\n",
    b"\r\n",
    b" ",
    b"\t",
    b"\"",
    b"\\",
    b"/",
    b"#",
    b"NTCreateX",
    b"Close",
    b"ReadX",
    b"Rename",
    b"FIND_FIRST",
    b"Deltree",
    b"NT_STATUS_OK",
    b"NT_STATUS_NO_SUCH_FILE",
    b"0x",
    b"0X",
    b"0xC0000034",
    b"-",
    b"+",
    b"0",
    b"010",
    b"9223372036854775807",
    b"9223372036854775808",
    b"-0x8000000000000000",
    b"1e308",
    b"1e400",
    b"NaN",
    b"inf",
    b"31536000",
    b"\"\\clients\\client1\\a b\"",
    b"client1",
    b"\xc3\xa9",
    b"*",
    b"SMBopenX",
    b"SUCCESS",
    b"ERROR",
];

fn loadfiles() -> impl Strategy<Value = String> {
    let seeds = vec![SEED.as_bytes().to_vec(), SEED.lines().take(3).collect::<Vec<_>>().join("\n").into_bytes()];
    input(seeds, TOKENS, 400).prop_map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
}

proptest! {
    #![proptest_config(config("fuzz_loadfile", 256))]

    #[test]
    fn loadfiles_parse_or_name_a_line(text in loadfiles()) {
        let lines: Vec<&str> = text.lines().collect();
        match Loadfile::parse(&text) {
            Ok(file) => {
                prop_assert!(!file.lines.is_empty());
                prop_assert_eq!(file.counts().iter().sum::<u64>(), file.lines.len() as u64);
                prop_assert!(file.lines.windows(2).all(|w| w[0].number < w[1].number), "lines out of order");
                let mut out = String::new();
                for line in &file.lines {
                    prop_assert!((1..=lines.len()).contains(&(line.number as usize)));
                    for (which, range) in line.paths.iter().enumerate() {
                        let path = file.text(range);
                        prop_assert!(range.is_empty() || path.starts_with('/'), "path {:?}", path);
                        // client1 resolved for client 1 is itself.
                        file.resolve(line, which, "/prefix", 1, &mut out);
                        prop_assert_eq!(&out, &format!("/prefix{path}"));
                        file.resolve(line, which, "", 12, &mut out);
                        prop_assert!(out.len() >= path.len());
                    }
                }
            }
            Err(e) => {
                prop_assert!(e.line as usize <= lines.len().max(1), "line {} of {}", e.line, lines.len());
                prop_assert!(!e.why.is_empty() && !e.why.contains('\n'), "{:?}", e.why);
                // Every line before the refused one parses: a file cut there is refused at most for holding nothing.
                if e.line > 1 {
                    let before = lines[..e.line as usize - 1].join("\n");
                    if let Err(early) = Loadfile::parse(&before) {
                        prop_assert!(early.why.contains("no operation"), "line {}: {}", early.line, early.why);
                    }
                }
            }
        }
    }
}
