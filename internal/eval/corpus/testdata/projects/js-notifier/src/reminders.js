import dayjs from "dayjs";
import ms from "ms";

const REMIND_BEFORE = ms("3d");

export function dueSoon(invoices, now = Date.now()) {
  return invoices.filter((inv) => {
    const due = dayjs(inv.dueDate).valueOf();
    return due > now && due - now <= REMIND_BEFORE;
  });
}

export function reminderText(invoice, now = Date.now()) {
  const left = ms(dayjs(invoice.dueDate).valueOf() - now, { long: true });
  return `Invoice ${invoice.number} (${invoice.amount}) is due in ${left}.`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const now = Date.parse("2024-05-14T09:00:00Z");
  const invoices = [
    { number: "INV-2024-1041", amount: "EUR 310.25", dueDate: "2024-05-16" },
    { number: "INV-2024-1042", amount: "EUR 99.99", dueDate: "2024-06-30" },
  ];
  for (const inv of dueSoon(invoices, now)) console.log(reminderText(inv, now));
}
