//! Area and perimeter report for a floor plan made of simple shapes.

use std::collections::HashSet;
use std::f64::consts::PI;

#[derive(Debug, Clone, Copy, PartialEq)]
struct Point {
    x: f64,
    y: f64,
}

trait Shape {
    fn area(&self) -> f64;
    fn name(&self) -> String;
}

struct Circle {
    center: Point,
    radius: f64,
}

struct Rect {
    origin: Point,
    w: f64,
    h: f64,
}

impl Shape for Circle {
    fn area(&self) -> f64 {
        PI * self.radius * self.radius
    }
    fn name(&self) -> String {
        format!("circle r={}", self.radius)
    }
}

impl Shape for Rect {
    fn area(&self) -> f64 {
        self.w * self.h
    }
    fn name(&self) -> String {
        format!("rect {}x{}", self.w, self.h)
    }
}

impl Rect {
    fn perimeter(&self) -> f64 {
        2.0 * (self.w + self.h)
    }
}

fn largest<T: PartialOrd + Copy>(xs: &[T]) -> Option<T> {
    let mut best = *xs.first()?;
    for &x in xs {
        if x > best {
            best = x;
        }
    }
    Some(best)
}

fn main() {
    let plan: Vec<Box<dyn Shape>> = vec![
        Box::new(Rect { origin: Point { x: 0.0, y: 0.0 }, w: 4.0, h: 3.0 }),
        Box::new(Circle { center: Point { x: 6.0, y: 2.0 }, radius: 1.5 }),
        Box::new(Rect { origin: Point { x: 0.0, y: 3.0 }, w: 2.5, h: 2.5 }),
    ];
    let mut corners = HashSet::new();
    for s in &plan {
        println!("{:<16} area {:>8.2} perimeter {:>8.2}", s.name(), s.area(), s.perimeter());
    }
    corners.insert(Point { x: 0.0, y: 0.0 });
    corners.insert(Point { x: 0.0, y: 3.0 });
    println!("{} distinct corners", corners.len());
    let biggest = largest(&plan);
    println!("largest: {:?}", biggest.map(|s| s.name()));
}
