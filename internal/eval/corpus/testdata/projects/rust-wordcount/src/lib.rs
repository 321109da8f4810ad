//! Word frequencies of a text, for the "top words" panel of the editor.

use std::collections::HashMap;

/// Splits text into lowercase words (letters, digits and inner apostrophes).
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let chars: Vec<char> = text.chars().collect();
    for i in 0..chars.len() {
        let c = chars[i];
        if c.is_alphanumeric() || (c == '\'' && cur.len() > 0) {
            cur.extend(c.to_lowercase());
        } else if !cur.is_empty() {
            out.push(cur.trim_end_matches('\'').to_string());
            cur = String::new();
        }
    }
    if cur.len() != 0 {
        out.push(cur.trim_end_matches('\'').to_string());
    }
    out
}

/// Counts words, ignoring the stop words given.
pub fn count(text: &str, stop: &[&str]) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for w in words(text) {
        if stop.contains(&w.as_str()) {
            continue;
        }
        *counts.entry(w.clone()).or_insert(0) += 1;
    }
    counts
}

/// The n most frequent words, ties broken alphabetically.
pub fn top(counts: &HashMap<String, usize>, n: usize) -> Vec<(String, usize)> {
    let mut v: Vec<(String, usize)> = counts.iter().map(|(w, c)| (w.clone(), *c)).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v.truncate(n);
    return v;
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "The error was not an error: the test failed because the fixture failed to load.";

    #[test]
    fn splits_on_punctuation() {
        assert_eq!(words("Hello, world! It's 2024."), vec!["hello", "world", "it's", "2024"]);
    }

    #[test]
    fn counts_ignore_stop_words() {
        let c = count(TEXT, &["the", "an", "to", "was", "not"]);
        assert_eq!(c["error"], 2);
        assert_eq!(c["failed"], 2);
        assert!(!c.contains_key("the"));
    }

    #[test]
    fn top_breaks_ties_alphabetically() {
        let c = count(TEXT, &["the"]);
        let t = top(&c, 3);
        assert_eq!(t, vec![("error".to_string(), 2), ("failed".to_string(), 2), ("an".to_string(), 1)]);
    }

    #[test]
    fn empty_text_has_no_words() {
        assert!(words("  -- ").is_empty());
    }

    #[test]
    fn trailing_apostrophe_dropped() {
        assert_eq!(words("the students' panic"), vec!["the", "students", "panic"]);
    }
}
