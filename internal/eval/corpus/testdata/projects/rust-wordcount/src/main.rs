use std::io::{self, Read};

fn main() {
    let mut text = String::new();
    io::stdin().read_to_string(&mut text).expect("reading stdin");
    let stop = ["the", "a", "an", "and", "of", "to", "in", "is", "it"];
    let counts = wordcount::count(&text, &stop);
    for (word, n) in wordcount::top(&counts, 10) {
        println!("{:>6} {}", n, word);
    }
}
