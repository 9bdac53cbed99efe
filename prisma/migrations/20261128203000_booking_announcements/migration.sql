-- Every change of a calendar's bookings is announced on the mirror's channel with the calendar's
-- id, whichever process makes it, when it commits (NOTIFY is transactional): gateways keep the
-- confirmed bookings the availability tools read until a change of their calendar is announced.
CREATE FUNCTION bookings_announce() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    PERFORM pg_notify('mirror_versions', OLD.calendar_id);
  END IF;
  IF TG_OP <> 'DELETE' THEN
    PERFORM pg_notify('mirror_versions', NEW.calendar_id);
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER bookings_announce
  AFTER INSERT OR UPDATE OR DELETE ON bookings
  FOR EACH ROW EXECUTE FUNCTION bookings_announce();
