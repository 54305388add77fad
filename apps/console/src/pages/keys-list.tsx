import { LIST_LIMIT } from '@apikeys/api-types';
import { type ApiKey, type ListApiKeysQuery, neighbourQueries } from '@apikeys/client';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { type FormEvent, useId, useRef, useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { ErrorNotice } from '../components/error-notice.js';
import { FieldProblem } from '../components/field-problem.js';
import { ScrollingTable } from '../components/scrolling-table.js';
import { StatusBadge } from '../components/status-badge.js';
import { TimeText } from '../components/time-text.js';
import { formatCreator, formatScope } from '../format.js';
import { permissionFilterProblem } from '../key-attributes.js';
import {
  FILTERS,
  hasFilters,
  PAGE_SIZES,
  queryFromSearch,
  STATUSES,
  searchFromQuery,
  withoutCursor,
} from '../list-search.js';
import { usePageTitle } from '../page-title.js';
import { queryKeys } from '../query-keys.js';
import { useSession } from '../session.js';

/** The link to a page of the list: the query in the address, so that it can be bookmarked and shared. */
function listHref(query: ListApiKeysQuery): string {
  const search = searchFromQuery(query).toString();
  return search === '' ? '/' : `/?${search}`;
}

interface IdFilterProps {
  label: string;
  name: 'workspace_id' | 'created_by_user_id';
  placeholder: string;
  query: ListApiKeysQuery;
}

/** A filter field for an ID, typed or pasted: neither spell-checked nor completed from what was typed before. */
function IdFilter({ label, name, placeholder, query }: IdFilterProps) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        name={name}
        defaultValue={query[name] ?? ''}
        placeholder={placeholder}
        spellCheck={false}
        autoComplete="off"
      />
    </div>
  );
}

interface SelectFilterProps {
  label: string;
  name: string;
  value: string;
  options: readonly (string | number)[];
  /** The label of a first option, which does not filter; none if absent. */
  anyLabel?: string;
}

/** A filter field with a choice among `options`. */
function SelectFilter({ label, name, value, options, anyLabel }: SelectFilterProps) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} name={name} defaultValue={value}>
        {anyLabel === undefined ? null : <option value="">{anyLabel}</option>}
        {options.map((option) => (
          <option key={option} value={option}>
            {option}
          </option>
        ))}
      </select>
    </div>
  );
}

/**
 * The permission filter: one permission name (a wildcard too), checked before the list is asked for it; the keys
 * listed are those whose permissions grant it.
 */
function PermissionFilter({ query, problem }: { query: ListApiKeysQuery; problem: string | undefined }) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>Grants permission</label>
      <input
        id={id}
        name="permission"
        defaultValue={query.permission ?? ''}
        placeholder="documents.read"
        spellCheck={false}
        autoComplete="off"
        aria-invalid={problem !== undefined}
        aria-describedby={problem === undefined ? undefined : `${id}-problem`}
      />
      <FieldProblem id={`${id}-problem`} problem={problem} />
    </div>
  );
}

/** The filters: status, workspace, creator, permission and page size; applying them goes back to the first page. */
function Filters({ query }: { query: ListApiKeysQuery }) {
  const navigate = useNavigate();
  const [permissionProblem, setPermissionProblem] = useState<string | undefined>(undefined);

  function apply(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const problem = permissionFilterProblem(String(form.get('permission') ?? ''));
    setPermissionProblem(problem);
    if (problem !== undefined) {
      return;
    }
    const search = new URLSearchParams();
    for (const name of [...FILTERS, 'limit']) {
      const value = String(form.get(name) ?? '').trim();
      if (value !== '') {
        search.set(name, value);
      }
    }
    navigate(listHref(queryFromSearch(search)));
  }

  return (
    // Keyed by the query, so that the fields show the address's filters after Back or a shared link.
    <form key={listHref(withoutCursor(query))} className="filters" onSubmit={apply} aria-label="Filter keys" noValidate>
      <SelectFilter label="Status" name="status" value={query.status ?? ''} options={STATUSES} anyLabel="Any status" />
      <IdFilter label="Workspace ID" name="workspace_id" placeholder="wrkspc_..." query={query} />
      <IdFilter label="Created by (user ID)" name="created_by_user_id" placeholder="user_..." query={query} />
      <PermissionFilter query={query} problem={permissionProblem} />
      <SelectFilter
        label="Keys per page"
        name="limit"
        value={String(query.limit ?? LIST_LIMIT.default)}
        options={PAGE_SIZES}
      />
      <div className="field field-actions">
        <button type="submit" className="button">
          Apply filters
        </button>
        {hasFilters(query) ? (
          <Link to={listHref(query.limit === undefined ? {} : { limit: query.limit })}>Clear filters</Link>
        ) : null}
      </div>
    </form>
  );
}

const KEY_COLUMNS = ['Name', 'Status', 'Scope', 'Created', 'Created by', 'Expires', 'Last used'];

function KeysTable({ keys, busy }: { keys: ApiKey[]; busy: boolean }) {
  return (
    <ScrollingTable caption="API keys, newest first" busy={busy} columns={KEY_COLUMNS}>
      {keys.map((key) => (
        <tr key={key.id}>
          <td>
            <Link to={`/keys/${encodeURIComponent(key.id)}`}>{key.name}</Link>
            <div className="muted mono">{key.id}</div>
          </td>
          <td>
            <StatusBadge status={key.status} />
          </td>
          <td className="mono">{formatScope(key.scope)}</td>
          <td>
            <TimeText value={key.created_at} />
          </td>
          <td className="mono">{formatCreator(key.created_by)}</td>
          <td>
            <TimeText value={key.expires_at} fallback="Never" />
          </td>
          <td>
            <TimeText value={key.last_used_at} fallback="Never" />
          </td>
        </tr>
      ))}
    </ScrollingTable>
  );
}

/**
 * A page without keys: reached through a cursor (a bookmarked page whose keys are gone), the first page of these
 * filters is offered; otherwise no key matches the filters, or the organization has none.
 */
function EmptyPage({ query }: { query: ListApiKeysQuery }) {
  if (query.after_id !== undefined || query.before_id !== undefined) {
    return (
      <div className="placeholder" role="status">
        <p>There are no keys on this page.</p>
        <Link to={listHref(withoutCursor(query))}>Go to the first page</Link>
      </div>
    );
  }
  return (
    <div className="placeholder" role="status">
      <p>{hasFilters(query) ? 'No key matches these filters.' : 'This organization has no API keys yet.'}</p>
      {hasFilters(query) ? <Link to="/">Show every key</Link> : <Link to="/keys/new">Create the first key</Link>}
    </div>
  );
}

/** The keys list: newest first, filtered and paged by the address's query. */
export function KeysList() {
  usePageTitle('API keys');
  const { client } = useSession();
  const [search] = useSearchParams();
  const query = queryFromSearch(search);
  const result = useQuery({
    queryKey: queryKeys.apiKeyList(query),
    queryFn: ({ signal }) => client.apiKeys.list(query, { signal }),
    placeholderData: keepPreviousData,
  });
  const page = result.data;
  const pages = page ? neighbourQueries(page) : { previous: null, next: null };
  const heading = useRef<HTMLHeadingElement>(null);

  return (
    <>
      <div className="page-heading">
        <h1 ref={heading} tabIndex={-1}>
          API keys
        </h1>
        <Link className="button" to="/keys/new">
          Create a key
        </Link>
      </div>
      <Filters query={query} />
      {result.isError ? <ErrorNotice error={result.error} title="The keys could not be loaded" /> : null}
      {result.isError ? (
        <button
          type="button"
          className="button button-secondary"
          // The button goes once the keys load: the focus goes to the page's heading.
          onClick={() => void result.refetch().then(() => heading.current?.focus())}
        >
          Try again
        </button>
      ) : null}
      {result.isPending ? (
        <p className="placeholder" role="status">
          Loading keys…
        </p>
      ) : null}
      {page && page.data.length === 0 ? <EmptyPage query={query} /> : null}
      {page && page.data.length > 0 ? (
        <>
          <p className="muted" role="status">
            {result.isFetching ? 'Loading…' : `Showing ${page.data.length} keys, newest first.`}
          </p>
          <KeysTable keys={page.data} busy={result.isFetching} />
        </>
      ) : null}
      {page && (pages.previous || pages.next) ? (
        <nav className="pager" aria-label="Pages of keys">
          {query.after_id || query.before_id ? <Link to={listHref(withoutCursor(query))}>First page</Link> : null}
          {pages.previous ? (
            <Link to={listHref(pages.previous)} rel="prev">
              <span aria-hidden="true">← </span>Previous page
            </Link>
          ) : null}
          {pages.next ? (
            <Link to={listHref(pages.next)} rel="next">
              Next page<span aria-hidden="true"> →</span>
            </Link>
          ) : null}
        </nav>
      ) : null}
    </>
  );
}
