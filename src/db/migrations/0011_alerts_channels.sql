-- Notification channels, alert rules and alerts, plan grants, and the
-- members quota on invitations.
--
-- Errors that reach the client follow 0007_resources.sql: SW422
-- 'field|sentence', SW409 'CODE|sentence', never a client's value in a
-- message. The checks that depend on more than one field (a rule's kind
-- decides which of its fields apply; a channel's kind decides url or
-- addresses) live in the BEFORE triggers below, so that a create and a
-- partial update are held to the same rules in one place.

-- ---- notification channels ----

-- WEBHOOK, SLACK and DISCORD channels POST to url; EMAIL channels mail
-- addresses (a JSON array of 1..10 lower-case addresses). The signing
-- secret of the HTTP kinds is sealed (aad "channel:<id>"; the API chooses
-- the id before the row exists). target_private: the url's host is an IP
-- literal that is not a public address (src/notify/address.c decides);
-- such a channel needs allow_private_targets, which only an operator sets.
-- Host names are checked again at each delivery, after resolution.
CREATE TABLE notification_channels (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
	name text NOT NULL,
	kind text NOT NULL CHECK (kind IN ('WEBHOOK', 'SLACK', 'DISCORD', 'EMAIL')),
	url text CHECK (url ~ '^https?://'),
	addresses jsonb CHECK (jsonb_typeof(addresses) = 'array'
			       AND jsonb_array_length(addresses) BETWEEN 1 AND 10),
	enabled boolean NOT NULL DEFAULT true,
	allow_private_targets boolean NOT NULL DEFAULT false,
	target_private boolean NOT NULL DEFAULT false,
	signing_secret text,
	created_by uuid REFERENCES users (id) ON DELETE SET NULL,
	created_at timestamptz NOT NULL DEFAULT now(),
	updated_at timestamptz NOT NULL DEFAULT now(),
	UNIQUE (organization_id, name),
	CHECK ((kind = 'EMAIL') = (url IS NULL) AND (kind = 'EMAIL') = (addresses IS NOT NULL)),
	CHECK (allow_private_targets OR NOT target_private)
);
CREATE INDEX notification_channels_org_created_idx
	ON notification_channels (organization_id, created_at, id);

CREATE FUNCTION steward_channel_check() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	IF NEW.kind = 'EMAIL' THEN
		IF NEW.url IS NOT NULL THEN
			RAISE EXCEPTION USING ERRCODE = 'SW422',
				MESSAGE = 'url|is not used by EMAIL channels (they have addresses)';
		END IF;
		IF NEW.addresses IS NULL THEN
			RAISE EXCEPTION USING ERRCODE = 'SW422',
				MESSAGE = 'addresses|is required for EMAIL channels';
		END IF;
	ELSE
		IF NEW.addresses IS NOT NULL THEN
			RAISE EXCEPTION USING ERRCODE = 'SW422',
				MESSAGE = 'addresses|is used by EMAIL channels only';
		END IF;
		IF NEW.url IS NULL THEN
			RAISE EXCEPTION USING ERRCODE = 'SW422',
				MESSAGE = 'url|is required for WEBHOOK, SLACK and DISCORD channels';
		END IF;
		IF NEW.kind IN ('SLACK', 'DISCORD') AND NEW.url !~ '^https://' THEN
			RAISE EXCEPTION USING ERRCODE = 'SW422',
				MESSAGE = 'url|must be an https URL for SLACK and DISCORD channels';
		END IF;
	END IF;
	IF NEW.target_private AND NOT NEW.allow_private_targets THEN
		RAISE EXCEPTION USING ERRCODE = 'SW422',
			MESSAGE = 'url|is a loopback, link-local, private or reserved address; only an '
				  'operator can allow private targets (allowPrivateTargets)';
	END IF;
	RETURN NEW;
END
$$;
CREATE TRIGGER notification_channels_check BEFORE INSERT OR UPDATE ON notification_channels
	FOR EACH ROW EXECUTE FUNCTION steward_channel_check();

-- ---- alert rules ----

-- METRIC_THRESHOLD: metric operator threshold for duration_seconds, on one
-- server or one application. SERVER_UNREACHABLE: a server (NULL: every
-- server of the organization) unreachable for duration_seconds.
-- DEPLOYMENT_FAILED: an application's deployment (NULL: any application)
-- failed. channel_ids: the notification channels told when an alert opens.
CREATE TABLE alert_rules (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
	name text NOT NULL,
	description text NOT NULL DEFAULT '',
	kind text NOT NULL CHECK (kind IN ('METRIC_THRESHOLD', 'SERVER_UNREACHABLE', 'DEPLOYMENT_FAILED')),
	severity text NOT NULL DEFAULT 'WARNING' CHECK (severity IN ('WARNING', 'CRITICAL')),
	metric text CHECK (metric IN ('CPU_PERCENT', 'MEMORY_PERCENT', 'DISK_PERCENT', 'SWAP_PERCENT',
				      'LOAD_AVERAGE_1M', 'NETWORK_RX_BYTES_PER_SECOND',
				      'NETWORK_TX_BYTES_PER_SECOND')),
	operator text CHECK (operator IN ('ABOVE', 'BELOW')),
	threshold double precision CHECK (threshold BETWEEN 0 AND 1e15),
	duration_seconds integer CHECK (duration_seconds BETWEEN 60 AND 86400),
	server_id uuid REFERENCES servers (id) ON DELETE CASCADE,
	application_id uuid REFERENCES applications (id) ON DELETE CASCADE,
	enabled boolean NOT NULL DEFAULT true,
	channel_ids uuid[] NOT NULL DEFAULT '{}' CHECK (cardinality(channel_ids) <= 10),
	created_by uuid REFERENCES users (id) ON DELETE SET NULL,
	created_at timestamptz NOT NULL DEFAULT now(),
	updated_at timestamptz NOT NULL DEFAULT now(),
	UNIQUE (organization_id, name)
);
CREATE INDEX alert_rules_org_created_idx ON alert_rules (organization_id, created_at, id);
CREATE INDEX alert_rules_server_idx ON alert_rules (server_id) WHERE server_id IS NOT NULL;
CREATE INDEX alert_rules_application_idx ON alert_rules (application_id) WHERE application_id IS NOT NULL;

CREATE FUNCTION steward_alert_rule_check() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
	v_found bigint;
BEGIN
	IF NEW.kind = 'METRIC_THRESHOLD' THEN
		IF NEW.metric IS NULL THEN
			RAISE EXCEPTION USING ERRCODE = 'SW422', MESSAGE = 'metric|is required for METRIC_THRESHOLD rules';
		END IF;
		IF NEW.operator IS NULL THEN
			RAISE EXCEPTION USING ERRCODE = 'SW422', MESSAGE = 'operator|is required for METRIC_THRESHOLD rules';
		END IF;
		IF NEW.threshold IS NULL THEN
			RAISE EXCEPTION USING ERRCODE = 'SW422', MESSAGE = 'threshold|is required for METRIC_THRESHOLD rules';
		END IF;
		IF NEW.metric LIKE '%\_PERCENT' AND NEW.threshold > 100 THEN
			RAISE EXCEPTION USING ERRCODE = 'SW422',
				MESSAGE = 'threshold|must be from 0 to 100 for a percentage metric';
		END IF;
		IF NEW.server_id IS NULL AND NEW.application_id IS NULL THEN
			RAISE EXCEPTION USING ERRCODE = 'SW422',
				MESSAGE = 'serverId|is required for METRIC_THRESHOLD rules, or applicationId';
		END IF;
		IF NEW.server_id IS NOT NULL AND NEW.application_id IS NOT NULL THEN
			RAISE EXCEPTION USING ERRCODE = 'SW422',
				MESSAGE = 'applicationId|cannot be given with serverId: a rule watches one or the other';
		END IF;
		IF NEW.application_id IS NOT NULL
		   AND NEW.metric IN ('DISK_PERCENT', 'SWAP_PERCENT', 'LOAD_AVERAGE_1M') THEN
			RAISE EXCEPTION USING ERRCODE = 'SW422',
				MESSAGE = 'metric|is measured on servers only: watch a serverId';
		END IF;
		NEW.duration_seconds := coalesce(NEW.duration_seconds, 300);
	ELSE
		IF NEW.metric IS NOT NULL THEN
			RAISE EXCEPTION USING ERRCODE = 'SW422', MESSAGE = 'metric|is used by METRIC_THRESHOLD rules only';
		END IF;
		IF NEW.operator IS NOT NULL THEN
			RAISE EXCEPTION USING ERRCODE = 'SW422', MESSAGE = 'operator|is used by METRIC_THRESHOLD rules only';
		END IF;
		IF NEW.threshold IS NOT NULL THEN
			RAISE EXCEPTION USING ERRCODE = 'SW422', MESSAGE = 'threshold|is used by METRIC_THRESHOLD rules only';
		END IF;
		IF NEW.kind = 'SERVER_UNREACHABLE' THEN
			IF NEW.application_id IS NOT NULL THEN
				RAISE EXCEPTION USING ERRCODE = 'SW422',
					MESSAGE = 'applicationId|is not used by SERVER_UNREACHABLE rules';
			END IF;
			NEW.duration_seconds := coalesce(NEW.duration_seconds, 300);
		ELSE
			IF NEW.server_id IS NOT NULL THEN
				RAISE EXCEPTION USING ERRCODE = 'SW422',
					MESSAGE = 'serverId|is not used by DEPLOYMENT_FAILED rules';
			END IF;
			IF NEW.duration_seconds IS NOT NULL THEN
				RAISE EXCEPTION USING ERRCODE = 'SW422',
					MESSAGE = 'durationSeconds|is not used by DEPLOYMENT_FAILED rules';
			END IF;
		END IF;
	END IF;
	IF NEW.server_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM servers s
		WHERE s.id = NEW.server_id AND s.organization_id = NEW.organization_id) THEN
		RAISE EXCEPTION USING ERRCODE = 'SW422', MESSAGE = 'serverId|is not a server of the organization';
	END IF;
	IF NEW.application_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM applications a
		WHERE a.id = NEW.application_id AND a.organization_id = NEW.organization_id) THEN
		RAISE EXCEPTION USING ERRCODE = 'SW422',
			MESSAGE = 'applicationId|is not an application of the organization';
	END IF;
	NEW.channel_ids := ARRAY(SELECT DISTINCT c FROM unnest(NEW.channel_ids) c ORDER BY c);
	-- FOR KEY SHARE: a channel cannot be deleted under a rule being saved
	-- (steward_channel_in_use() then sees the rule).
	SELECT count(*) INTO v_found FROM (SELECT 1 FROM notification_channels n
		WHERE n.organization_id = NEW.organization_id AND n.id = ANY (NEW.channel_ids)
		FOR KEY SHARE) x;
	IF v_found <> cardinality(NEW.channel_ids) THEN
		RAISE EXCEPTION USING ERRCODE = 'SW422',
			MESSAGE = 'channelIds|names a notification channel that is not the organization''s';
	END IF;
	RETURN NEW;
END
$$;
CREATE TRIGGER alert_rules_check BEFORE INSERT OR UPDATE ON alert_rules
	FOR EACH ROW EXECUTE FUNCTION steward_alert_rule_check();

-- A channel that a rule still notifies is not deleted (409 CHANNEL_IN_USE).
-- Only for a DELETE of the channel itself (trigger depth 1): when the
-- organization is deleted, the cascade removes its rules too.
CREATE FUNCTION steward_channel_in_use() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	IF pg_trigger_depth() = 1 AND EXISTS (SELECT 1 FROM alert_rules r
		WHERE r.organization_id = OLD.organization_id AND OLD.id = ANY (r.channel_ids)) THEN
		RAISE EXCEPTION USING ERRCODE = 'SW409',
			MESSAGE = 'CHANNEL_IN_USE|Alert rules still notify this channel; remove it from '
				  'their channelIds first.';
	END IF;
	RETURN OLD;
END
$$;
CREATE TRIGGER notification_channels_in_use BEFORE DELETE ON notification_channels
	FOR EACH ROW EXECUTE FUNCTION steward_channel_in_use();

-- ---- alerts ----

-- An alert is OPEN until a member resolves it (resolved_by) or the
-- evaluator sees its condition clear (resolved_by NULL). One alert is open
-- at a time per rule and target; an alert outlives its rule (rule_id NULL)
-- but not its server or application.
CREATE TABLE alerts (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
	rule_id uuid REFERENCES alert_rules (id) ON DELETE SET NULL,
	severity text NOT NULL CHECK (severity IN ('WARNING', 'CRITICAL')),
	status text NOT NULL DEFAULT 'OPEN' CHECK (status IN ('OPEN', 'RESOLVED')),
	title text NOT NULL CHECK (char_length(title) BETWEEN 1 AND 200),
	message text NOT NULL DEFAULT '' CHECK (char_length(message) <= 2000),
	server_id uuid REFERENCES servers (id) ON DELETE CASCADE,
	application_id uuid REFERENCES applications (id) ON DELETE CASCADE,
	created_at timestamptz NOT NULL DEFAULT now(),
	updated_at timestamptz NOT NULL DEFAULT now(),
	resolved_at timestamptz,
	resolved_by uuid REFERENCES users (id) ON DELETE SET NULL,
	CHECK ((status = 'RESOLVED') = (resolved_at IS NOT NULL))
);
CREATE INDEX alerts_org_created_idx ON alerts (organization_id, created_at, id);
CREATE INDEX alerts_org_open_idx ON alerts (organization_id, severity) WHERE status = 'OPEN';
CREATE UNIQUE INDEX alerts_one_open ON alerts (rule_id,
	coalesce(server_id, '00000000-0000-0000-0000-000000000000'::uuid),
	coalesce(application_id, '00000000-0000-0000-0000-000000000000'::uuid))
	WHERE status = 'OPEN';

-- Opens an alert of p_rule (NULL: none) for a target (server, application
-- or neither), or returns the one already open for the same rule and
-- target. The alert evaluator calls it; the tests do too. Raises (not for
-- clients: the evaluator passes its own values) when the rule, server or
-- application is not the organization's.
CREATE FUNCTION steward_alert_open(p_org uuid, p_rule uuid, p_severity text, p_title text,
				   p_message text DEFAULT '', p_server uuid DEFAULT NULL,
				   p_application uuid DEFAULT NULL) RETURNS alerts
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v alerts;
BEGIN
	IF (p_rule IS NOT NULL AND NOT EXISTS (SELECT 1 FROM alert_rules r
		WHERE r.id = p_rule AND r.organization_id = p_org))
	   OR (p_server IS NOT NULL AND NOT EXISTS (SELECT 1 FROM servers s
		WHERE s.id = p_server AND s.organization_id = p_org))
	   OR (p_application IS NOT NULL AND NOT EXISTS (SELECT 1 FROM applications a
		WHERE a.id = p_application AND a.organization_id = p_org)) THEN
		RAISE EXCEPTION 'steward_alert_open: rule, server or application of another organization';
	END IF;
	INSERT INTO alerts (organization_id, rule_id, severity, title, message, server_id, application_id)
	VALUES (p_org, p_rule, p_severity, p_title, coalesce(p_message, ''), p_server, p_application)
	ON CONFLICT (rule_id, coalesce(server_id, '00000000-0000-0000-0000-000000000000'::uuid),
		     coalesce(application_id, '00000000-0000-0000-0000-000000000000'::uuid))
		WHERE status = 'OPEN' DO NOTHING
	RETURNING * INTO v;
	IF v.id IS NULL THEN
		SELECT * INTO v FROM alerts a
		WHERE a.rule_id = p_rule AND a.status = 'OPEN'
		AND a.server_id IS NOT DISTINCT FROM p_server
		AND a.application_id IS NOT DISTINCT FROM p_application;
	END IF;
	RETURN v;
END
$$;

-- A member resolves an alert (POST /alerts/:id/resolve): OPEN becomes
-- RESOLVED by p_user; an alert resolved already is returned as it is
-- (r_changed false). No row: not the organization's alert. A function, so
-- that the row returned is the one after the change even when a
-- concurrent resolve won (each statement here sees what committed).
CREATE FUNCTION steward_alert_resolve(p_org uuid, p_alert uuid, p_user uuid)
RETURNS TABLE (r_alert alerts, r_changed boolean)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v alerts;
BEGIN
	UPDATE alerts a SET status = 'RESOLVED', resolved_at = now(), resolved_by = p_user,
		updated_at = now()
	WHERE a.organization_id = p_org AND a.id = p_alert AND a.status = 'OPEN'
	RETURNING a.* INTO v;
	IF FOUND THEN
		RETURN QUERY SELECT v, true;
		RETURN;
	END IF;
	SELECT * INTO v FROM alerts a WHERE a.organization_id = p_org AND a.id = p_alert;
	IF FOUND THEN
		RETURN QUERY SELECT v, false;
	END IF;
END
$$;

-- Resolves the open alert of p_rule for a target because its condition
-- cleared (resolved_by NULL: nobody did). Returns how many (0 or 1).
CREATE FUNCTION steward_alert_close(p_org uuid, p_rule uuid, p_server uuid DEFAULT NULL,
				    p_application uuid DEFAULT NULL) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	n integer;
BEGIN
	UPDATE alerts a SET status = 'RESOLVED', resolved_at = now(), updated_at = now()
	WHERE a.organization_id = p_org AND a.rule_id = p_rule AND a.status = 'OPEN'
	AND a.server_id IS NOT DISTINCT FROM p_server
	AND a.application_id IS NOT DISTINCT FROM p_application;
	GET DIAGNOSTICS n = ROW_COUNT;
	RETURN n;
END
$$;

-- ---- plans and subscriptions ----

-- A plan as the API shows it.
CREATE FUNCTION steward_plan_json(p plans) RETURNS jsonb
LANGUAGE sql STABLE AS $$
	SELECT jsonb_build_object('id', p.id, 'name', p.name, 'description', p.description,
		'quotas', jsonb_build_object('applications', p.max_applications,
					     'servers', p.max_servers, 'members', p.max_members),
		'priceCentsMonthly', p.price_cents_monthly, 'isDefault', p.is_default)
$$;

-- What an organization uses of each quota, counted as steward_quota_check()
-- counts it (the control plane's own server is not counted).
CREATE FUNCTION steward_usage(p_org uuid) RETURNS jsonb
LANGUAGE sql STABLE AS $$
	SELECT jsonb_build_object(
		'applications', (SELECT count(*) FROM applications WHERE organization_id = p_org),
		'servers', (SELECT count(*) FROM servers WHERE organization_id = p_org AND NOT is_local),
		'members', (SELECT count(*) FROM memberships WHERE organization_id = p_org))
$$;

-- An organization's subscription as the API shows it: the plan in force,
-- the provider ("manual": plans are granted by an operator), the status,
-- who granted it and when (null for the plan an organization starts on),
-- and the usage against the plan's quotas.
CREATE FUNCTION steward_subscription_of(p_org uuid) RETURNS jsonb
LANGUAGE sql STABLE AS $$
	SELECT jsonb_build_object('organizationId', o.id,
		'plan', steward_plan_json(steward_plan_of(o.id)),
		'provider', coalesce(s.provider, 'manual'),
		'status', coalesce(s.status, 'ACTIVE'),
		'grantedBy', s.granted_by,
		'grantedAt', CASE WHEN s.granted_by IS NOT NULL THEN steward_rfc3339(s.updated_at) END,
		'usage', steward_usage(o.id))
	FROM organizations o LEFT JOIN subscriptions s ON s.organization_id = o.id
	WHERE o.id = p_org
$$;

-- Grants p_plan to p_org (the manual billing provider: an operator's
-- decision). Refused with SW409 PLAN_TOO_SMALL, naming each quota the
-- organization already exceeds, when the plan is smaller than what the
-- organization uses. Returns the plan before and the subscription after.
CREATE FUNCTION steward_subscription_grant(p_org uuid, p_plan text, p_user uuid)
RETURNS TABLE (previous_plan text, subscription text)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	v_plan plans;
	v_previous text;
	v_usage jsonb;
	v_over text[] := '{}';
BEGIN
	PERFORM 1 FROM organizations o WHERE o.id = p_org FOR UPDATE;
	IF NOT FOUND THEN
		RAISE EXCEPTION USING ERRCODE = 'SW422',
			MESSAGE = 'organizationId|is not an organization of this installation';
	END IF;
	SELECT * INTO v_plan FROM plans p WHERE p.id = p_plan;
	IF NOT FOUND THEN
		RAISE EXCEPTION USING ERRCODE = 'SW422', MESSAGE = 'planId|is not a plan (GET /plans lists them)';
	END IF;
	v_previous := (steward_plan_of(p_org)).id;
	v_usage := steward_usage(p_org);
	IF v_plan.max_applications < (v_usage->>'applications')::bigint THEN
		v_over := v_over || format('%s applications (the organization has %s)',
					   v_plan.max_applications, v_usage->>'applications');
	END IF;
	IF v_plan.max_servers < (v_usage->>'servers')::bigint THEN
		v_over := v_over || format('%s servers (it has %s)', v_plan.max_servers, v_usage->>'servers');
	END IF;
	IF v_plan.max_members < (v_usage->>'members')::bigint THEN
		v_over := v_over || format('%s members (it has %s)', v_plan.max_members, v_usage->>'members');
	END IF;
	IF cardinality(v_over) > 0 THEN
		RAISE EXCEPTION USING ERRCODE = 'SW409',
			MESSAGE = 'PLAN_TOO_SMALL|The ' || v_plan.name || ' plan allows '
				  || array_to_string(v_over, ', ') || '; remove what exceeds it first.';
	END IF;
	INSERT INTO subscriptions AS s (organization_id, plan_id, provider, status, granted_by)
	VALUES (p_org, p_plan, 'manual', 'ACTIVE', p_user)
	ON CONFLICT (organization_id) DO UPDATE
		SET plan_id = EXCLUDED.plan_id, status = 'ACTIVE', granted_by = EXCLUDED.granted_by,
		    updated_at = now();
	RETURN QUERY SELECT v_previous, steward_subscription_of(p_org)::text;
END
$$;

-- ---- the members quota ----

-- An invitation is not opened, and a membership is not made, in an
-- organization whose plan's members are all taken: SW409 QUOTA_EXCEEDED
-- from steward_quota_check() (0007), which locks the organization's row
-- first. Triggers rather than new versions of steward_invite() and
-- steward_accept_invitation() (0006), which stay as they are: every way
-- a member is added is held to the quota, and each refusal rolls back what
-- its function did before (the account an accept made). Open invitations
-- are not counted, members are: an invitation that cannot be accepted now
-- stays open for when the plan grows.
CREATE FUNCTION steward_members_quota() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM steward_quota_check(NEW.organization_id, 'members');
	RETURN NEW;
END
$$;
CREATE TRIGGER invitations_members_quota BEFORE INSERT ON invitations
	FOR EACH ROW EXECUTE FUNCTION steward_members_quota();
CREATE TRIGGER memberships_members_quota BEFORE INSERT ON memberships
	FOR EACH ROW EXECUTE FUNCTION steward_members_quota();
