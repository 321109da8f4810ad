//! URL slugs for blog post titles: "Hello, World!" -> "hello-world".

/// Maximum slug length in bytes; longer slugs are cut at a dash.
pub const MAX_LEN: usize = 48;

/// Folds the common Latin accented letters to ASCII.
fn fold(c: char) -> Option<&'static str> {
    Some(match c {
        'à' | 'á' | 'â' | 'ä' | 'ã' | 'å' => "a",
        'ç' => "c",
        'è' | 'é' | 'ê' | 'ë' => "e",
        'ì' | 'í' | 'î' | 'ï' => "i",
        'ñ' => "n",
        'ò' | 'ó' | 'ô' | 'ö' | 'õ' => "o",
        'ù' | 'ú' | 'û' | 'ü' => "u",
        'ß' => "ss",
        'æ' => "ae",
        'œ' => "oe",
        _ => return None,
    })
}

/// Turns a title into a lowercase ASCII slug of words joined by dashes.
pub fn slugify(title: &str) -> String {
    let mut out = String::with_capacity(title.len());
    let mut pending_dash = false;
    for c in title.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            if pending_dash && !out.is_empty() {
                out.push('-');
            }
            pending_dash = false;
            out.push(c);
        } else if let Some(s) = fold(c) {
            if pending_dash && !out.is_empty() {
                out.push('-');
            }
            pending_dash = false;
            out.push_str(s);
        } else if c == '\'' {
            // apostrophes join: "don't" -> "dont"
        } else {
            pending_dash = true;
        }
    }
    truncate(out)
}

fn truncate(s: String) -> String {
    if s.len() <= MAX_LEN {
        return s;
    }
    match s[..MAX_LEN].rfind('-') {
        Some(i) => s[..=i].to_string(),
        None => s[..MAX_LEN].to_string(),
    }
}

/// Makes `slug` unique among `taken` by appending -2, -3, ...
pub fn unique(slug: &str, taken: &[String]) -> String {
    if !taken.iter().any(|t| t == slug) {
        return slug.to_string();
    }
    (2..).map(|n| format!("{}-{}", slug, n)).find(|s| !taken.contains(s)).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simple_title() {
        assert_eq!(slugify("Hello, World!"), "hello-world");
    }

    #[test]
    fn collapses_separators() {
        assert_eq!(slugify("  Rust -- the   good parts  "), "rust-the-good-parts");
    }

    #[test]
    fn folds_accents() {
        assert_eq!(slugify("Crème brûlée à Paris"), "creme-brulee-a-paris");
    }

    #[test]
    fn apostrophes_join() {
        assert_eq!(slugify("Don't panic"), "dont-panic");
        assert_eq!(slugify("Don’t panic"), "dont-panic");
    }

    #[test]
    fn long_titles_are_cut_at_a_word() {
        let s = slugify("A very long title that goes on and on about nothing in particular at all");
        assert!(s.len() <= MAX_LEN, "slug {:?} is {} bytes long", s, s.len());
        assert!(!s.ends_with('-'), "slug {:?} ends with a dash", s);
    }

    #[test]
    fn unique_appends_counter() {
        let taken = vec!["intro".to_string(), "intro-2".to_string()];
        assert_eq!(unique("intro", &taken), "intro-3");
        assert_eq!(unique("outro", &taken), "outro");
    }
}
