// A scrolling list that puts in the DOM only the rows in view (and a few
// around them): a 2,000-message log is drawn as fast as a 20-message one.
import { useEffect, useRef, useState } from "preact/hooks";

export const ROW_HEIGHT = 20;
const VIEW_HEIGHT = 480;
const OVERSCAN = 12;

// VirtualRows draws row(item, index) for the items in view; every row is
// ROW_HEIGHT pixels high. overlay draws whatever lies across the rows (the
// cache boundary) inside the scrolled content. scrollToIndex, when it
// changes, brings that row into view.
export function VirtualRows({ items, row, overlay, scrollToIndex, name }) {
  const box = useRef(null);
  const [top, setTop] = useState(0);
  const total = items.length * ROW_HEIGHT;
  const height = Math.min(total, VIEW_HEIGHT);
  useEffect(() => {
    if (scrollToIndex === undefined || scrollToIndex === null || !box.current) return;
    const want = Math.max(0, scrollToIndex.index * ROW_HEIGHT - height / 2);
    box.current.scrollTop = want;
    setTop(want);
  }, [scrollToIndex]);
  const first = Math.max(0, Math.floor(top / ROW_HEIGHT) - OVERSCAN);
  const last = Math.min(items.length, Math.ceil((top + height) / ROW_HEIGHT) + OVERSCAN);
  const shown = [];
  for (let i = first; i < last; i++) shown.push(row(items[i], i));
  return (
    <div class="rows" ref={box} data-list={name} data-count={items.length} style={{ height: `${height + 2}px` }} onScroll={(e) => setTop(e.currentTarget.scrollTop)}>
      <div class="rows-content" style={{ height: `${total}px` }}>
        <div class="rows-window" style={{ transform: `translateY(${first * ROW_HEIGHT}px)` }}>
          {shown}
        </div>
        {overlay}
      </div>
    </div>
  );
}
