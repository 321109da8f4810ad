const React = require("react");
const { renderToStaticMarkup } = require("react-dom/server");

function ProductList({ products }) {
  return React.createElement(
    "ul",
    { className: "products" },
    products.map((p) => React.createElement("li", { key: p.sku }, `${p.name} — ${p.price}`)),
  );
}

const products = [
  { sku: "TEA-EARL-250", name: "Earl Grey 250 g", price: "EUR 8.50" },
  { sku: "MUG-STONE", name: "Stoneware mug", price: "EUR 14.00" },
];

console.log(renderToStaticMarkup(React.createElement(ProductList, { products })));
