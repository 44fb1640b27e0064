// The digest aggregates every ticket event type, read through the events contract
// (packages/events): its envelope and payload schemas, and the one parser of a message body.
export { parseTicketEvent, type TicketEvent } from '@support-agent/events';
